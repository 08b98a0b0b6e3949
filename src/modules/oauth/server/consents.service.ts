import { recordAudit, revokeClientSessions } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { deleteConsent, findConsent, listConsents, upsertConsent } from './consents.queries.ts';
import { deleteModelsOfAccountClient } from './models.queries.ts';

/** What a user allowed a client: OpenID scopes, and per API identifier its scopes. */
export interface Consent {
  scopes: string[];
  resources: Record<string, string[]>;
}

export async function consentOf(ctx: AppContext, userId: string, clientId: string): Promise<Consent | null> {
  const row = await findConsent(ctx.db, userId, clientId);
  if (!row) return null;
  return {
    scopes: JSON.parse(row.scopes) as string[],
    resources: JSON.parse(row.resources) as Consent['resources'],
  };
}

/** Adds what was just allowed to what the user allowed before (consent only grows until revoked). */
export async function recordConsent(
  ctx: AppContext,
  userId: string,
  clientId: string,
  added: Consent,
): Promise<void> {
  const before = (await consentOf(ctx, userId, clientId)) ?? { scopes: [], resources: {} };
  const resources = { ...before.resources };
  for (const [identifier, scopes] of Object.entries(added.resources)) {
    resources[identifier] = [...new Set([...(resources[identifier] ?? []), ...scopes])];
  }
  // The audit entry emits `oauth.grant.created` (docs/api.md §19), committed with the consent.
  await ctx.db.transaction().execute(async (trx) => {
    await upsertConsent(
      trx,
      {
        user_id: userId,
        client_id: clientId,
        scopes: JSON.stringify([...new Set([...before.scopes, ...added.scopes])]),
        resources: JSON.stringify(resources),
      },
      Date.now(),
    );
    await recordAudit(trx, {
      action: 'oauth.grant',
      actor: { type: 'user', id: userId },
      target: { type: 'oauth_client', id: clientId },
      details: { user_id: userId, scopes: added.scopes, resources: Object.keys(added.resources) },
    });
  });
}

export interface ConnectedApp {
  client_id: string;
  name: string;
  scopes: string[];
  resources: Record<string, string[]>;
  created_at: string;
  updated_at: string;
}

/** The applications a user allowed (docs/api.md §17: auth.grants). */
export async function connectedApps(ctx: AppContext, userId: string): Promise<{ data: ConnectedApp[] }> {
  const rows = await listConsents(ctx.db, userId);
  return {
    data: rows.map((r) => ({
      client_id: r.client_id,
      name: r.name,
      scopes: JSON.parse(r.scopes) as string[],
      resources: JSON.parse(r.resources) as Record<string, string[]>,
      created_at: new Date(Number(r.created_at)).toISOString(),
      updated_at: new Date(Number(r.updated_at)).toISOString(),
    })),
  };
}

/**
 * Revokes a connected app: the stored consent, and every grant, code, access and refresh token the
 * provider holds for that user and client (they stop working and introspect as inactive at once).
 */
export async function revokeConnectedApp(ctx: AppContext, userId: string, clientId: string): Promise<void> {
  const had = await ctx.db.transaction().execute(async (trx) => {
    const consent = await deleteConsent(trx, userId, clientId);
    const models = await deleteModelsOfAccountClient(trx, userId, clientId);
    // Its grants' sessions end too (docs/api.md §17: a grant's deletion ends them).
    const sessions = await revokeClientSessions(trx, userId, clientId, 'grant_deleted');
    if (!consent && models === 0 && sessions === 0) return false;
    // The audit entry emits `oauth.grant.revoked` (docs/api.md §19), committed with the revocation.
    await recordAudit(trx, {
      action: 'oauth.grant_revoke',
      actor: { type: 'user', id: userId },
      target: { type: 'oauth_client', id: clientId },
      details: { user_id: userId },
    });
    return true;
  });
  if (!had) throw new ApiError('client_not_found', { detail: 'You have not allowed this application' });
}
