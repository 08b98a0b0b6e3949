import type { AppContext } from '../../context.ts';
import { findConsent, upsertConsent } from './consents.queries.ts';

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
  await upsertConsent(
    ctx.db,
    {
      user_id: userId,
      client_id: clientId,
      scopes: JSON.stringify([...new Set([...before.scopes, ...added.scopes])]),
      resources: JSON.stringify(resources),
    },
    Date.now(),
  );
}
