import { insertUser, newUserRow, type PublicUser, recordAudit, toPublicUser } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
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
): Promise<PublicUser> {
  const row = newUserRow(
    { created_via: 'admin', email: '', name: body.name, role: body.role ?? 'user', kind: 'service' },
    Date.now(),
  );
  row.email = `service:${row.id}`;
  await ctx.db.transaction().execute(async (trx) => {
    await insertUser(trx, row);
    // Global roles belong to the organizations module (docs/api.md §21): checked and set there.
    if (body.roles !== undefined && body.roles.length > 0) {
      await organizationsOf(ctx).setGlobalRoles(ctx, trx, row.id, body.roles, by.actor);
    }
    await recordAudit(trx, {
      action: 'user.create',
      actor: by.actor,
      target: { type: 'user', id: row.id },
      client: by.client,
      details: { kind: 'service', role: row.role },
      subject: row,
    });
  });
  return toPublicUser(row);
}
