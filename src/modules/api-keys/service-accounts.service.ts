import type { AuthContext } from '../../http/guard.ts';
import { insertUser, newUserRow, type PublicUser, recordAudit, toPublicUser } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { ServiceAccountBody } from './api-keys.schemas.ts';
import type { ChangedBy } from './api-keys.service.ts';
import { organizationsOf } from './organizations-port.ts';

/**
 * POST /api/v1/service-accounts (docs/api.md §22): a user of kind `service`, with no e-mail (its
 * column holds `service:<id>`, which no sign-in can name: the api_keys migration), no password and
 * no factors. It acts only through keys an admin makes for it (`user_id`).
 */
export async function createServiceAccount(
  ctx: AppContext,
  body: ServiceAccountBody,
  by: ChangedBy,
  auth: AuthContext | null = null,
): Promise<PublicUser> {
  const roles = body.roles ?? [];
  const orgs = organizationsOf(ctx);
  // Global roles belong to the organizations module (docs/api.md §21): every name is checked
  // before anything is written; the CLI (no caller) makes none.
  if (roles.length > 0) {
    if (auth === null || !ctx.modules.isEnabled('organizations')) {
      throw new ApiError('validation_failed', {
        detail: 'body/roles needs the organizations module',
        errors: [{ path: '/roles', message: 'needs the organizations module' }],
      });
    }
    await orgs.checkRoles(ctx, roles);
  }
  const row = newUserRow(
    { created_via: 'admin', email: '', name: body.name, role: body.role ?? 'user', kind: 'service' },
    Date.now(),
  );
  row.email = `service:${row.id}`;
  await ctx.db.transaction().execute(async (trx) => {
    await insertUser(trx, row);
    await recordAudit(trx, {
      action: 'user.create',
      actor: by.actor,
      target: { type: 'user', id: row.id },
      client: by.client,
      details: { kind: 'service', role: row.role },
      subject: row,
    });
  });
  // Its own transaction (the organizations module's users.roles_put): a role deleted in between is
  // the one way this fails after the account exists, and the answer then says so.
  if (roles.length > 0 && auth !== null) await orgs.setGlobalRoles(ctx, row.id, roles, { ...by, auth });
  return toPublicUser(row);
}
