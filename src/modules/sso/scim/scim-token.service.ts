import { recordAudit } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { hashSecret, sameHash, secretFormat } from '../../../platform/secret-format.ts';
import {
  type callerOf,
  orgAccess,
  requirePermission,
  type ScimOrganization,
  scimOrganization,
} from '../../organizations/index.ts';
import { deleteToken, replaceToken, tokenByHash } from './scim.queries.ts';
import { ScimError } from './scim-errors.ts';

/*
 * One SCIM bearer token per organization (docs/api.md §23, settled): `gscim_` and the API keys'
 * scannable format (src/platform/secret-format.ts), shown once, stored as its SHA-256. Checking one
 * is a hash lookup on a unique index plus a constant-time comparison: nothing expensive to reserve.
 */

const FORMAT = secretFormat('gscim_');
/** For secret scanners (docs/sso.md). */
export const SCIM_TOKEN_SCAN_REGEX = FORMAT.scanRegex;
const SHOWN_CHARS = 12;

type Caller = ReturnType<typeof callerOf>;

const audit = (action: 'scim_token.create' | 'scim_token.revoke', caller: Caller, orgId: string) => ({
  action,
  actor: caller.actor,
  target: { type: 'organization' as const, id: orgId },
  client: caller.client,
  details: {},
});

/** organizations.scim_token: a new token replacing the previous one (admin or org:settings:manage). */
export async function createScimToken(ctx: AppContext, orgId: string, caller: Caller) {
  return ctx.db.transaction().execute(async (trx) => {
    const access = await orgAccess(ctx, orgId, caller, trx);
    requirePermission(access, 'org:settings:manage');
    const token = FORMAT.create();
    const now = Date.now();
    await replaceToken(trx, orgId, hashSecret(token), token.slice(0, SHOWN_CHARS), now);
    await recordAudit(trx, audit('scim_token.create', caller, orgId));
    return { token, created_at: new Date(now).toISOString() };
  });
}

/** organizations.scim_token_delete: revokes the organization's token (404 when there is none). */
export async function revokeScimToken(ctx: AppContext, orgId: string, caller: Caller): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const access = await orgAccess(ctx, orgId, caller, trx);
    requirePermission(access, 'org:settings:manage');
    if (!(await deleteToken(trx, orgId))) {
      throw new ApiError('not_found', { detail: 'This organization has no SCIM token' });
    }
    await recordAudit(trx, audit('scim_token.revoke', caller, orgId));
  });
}

const unauthorized = (detail: string) =>
  new ScimError(401, detail, undefined, { 'www-authenticate': 'Bearer' });

/** The organization a request's bearer token belongs to; 401 (SCIM error, WWW-Authenticate: Bearer) otherwise. */
export async function scimCaller(
  ctx: AppContext,
  authorization: string | undefined,
): Promise<ScimOrganization> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) throw unauthorized('A SCIM request needs the organization’s token as a Bearer token');
  const token = match[1];
  // A token of the wrong shape or checksum never reaches the database.
  if (!FORMAT.wellFormed(token)) throw unauthorized('The SCIM token is not valid');
  const hash = hashSecret(token);
  const row = await tokenByHash(ctx.db, hash);
  if (!row || !sameHash(row.token_hash, hash)) throw unauthorized('The SCIM token is not valid');
  const org = await scimOrganization(ctx.db, row.organization_id);
  if (!org) throw unauthorized('The SCIM token is not valid');
  return org;
}
