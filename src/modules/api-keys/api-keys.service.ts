import { v7 as uuidv7 } from 'uuid';
import { dropWindow } from '../../identity/budgets/sliding-window.queries.ts';
import {
  type AuditActor,
  type ClientInfo,
  findUserById,
  recordAudit,
  recordAudits,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { Db, UserRow } from '../../platform/db/schema.ts';
import {
  type ApiKeyRow,
  countLiveKeys,
  findUnrevokedKey,
  insertKey,
  lockOwner,
  markRevoked,
  orphanedOrganizationKeys,
  revokeOwnerKeyRows,
  selectKeyPage,
} from './api-keys.queries.ts';
import type {
  ApiKeyWithSecret,
  CreateKeyBody,
  KeyPage,
  ListKeysQuery,
  PublicApiKey,
} from './api-keys.schemas.ts';
import { hashKey, newKey, SHOWN_CHARS } from './key-format.ts';
import { eventView, keyNotFound, toPublicKey } from './key-view.ts';
import { organizationsOf } from './organizations-port.ts';
import { inOwnerTurn } from './owner-turns.ts';

/*
 * Managing keys (docs/api.md §22; the choices where it is silent: docs/api-keys.md).
 */

/** Who makes a change (a signed-in user, or the system from the CLI), for its audit entry. */
export interface ChangedBy {
  actor: AuditActor;
  client: ClientInfo | null;
}

/** At most this many live keys per owner (409 `key_limit`). */
export const LIVE_KEYS_PER_OWNER = 100;
/** A client's clock may run a little ahead: `expires_at` this close past the limit is still accepted. */
const CLOCK_SLACK_MS = 60_000;
const DAY_MS = 86_400_000;
const VERIFY_SCOPE = 'api_keys:verify';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const invalid = (path: string, message: string) =>
  new ApiError('validation_failed', { detail: `body${path} ${message}`, errors: [{ path, message }] });

/** The scopes a key may carry now: `<group>:read|write` of every enabled module's group, plus verify. */
export function grantableScopes(ctx: AppContext, directory: ModuleDirectory): Set<string> {
  const out = new Set<string>([VERIFY_SCOPE]);
  for (const m of directory.catalog()) {
    if (!ctx.modules.isEnabled(m.name)) continue;
    for (const g of m.groups) {
      out.add(`${g}:read`);
      out.add(`${g}:write`);
    }
  }
  return out;
}

function checkScopes(
  ctx: AppContext,
  directory: ModuleDirectory,
  scopes: string[] | null | undefined,
  caller: UserRow | null,
): string[] | null {
  if (scopes === undefined || scopes === null) return null;
  const allowed = grantableScopes(ctx, directory);
  scopes.forEach((s, i) => {
    if (!allowed.has(s)) throw invalid(`/scopes/${i}`, `is not a scope: ${JSON.stringify(s.slice(0, 100))}`);
  });
  if (scopes.includes(VERIFY_SCOPE) && caller !== null && caller.role !== 'admin') {
    throw new ApiError('forbidden', { detail: 'Only an admin may create a key with api_keys:verify' });
  }
  return [...new Set(scopes)];
}

function checkExpiry(ctx: AppContext, raw: string | null | undefined, now: number): number | null {
  const maxMs = ctx.config.apiKeys.maxTtlDays * DAY_MS;
  if (raw === undefined) return now + maxMs;
  if (raw === null) {
    if (ctx.config.apiKeys.allowNoExpiry) return null;
    throw invalid('/expires_at', 'may not be null (API_KEY_ALLOW_NO_EXPIRY is off)');
  }
  const at = Date.parse(raw);
  if (Number.isNaN(at)) throw invalid('/expires_at', 'must be an ISO 8601 date-time');
  if (at <= now) throw invalid('/expires_at', 'must be in the future');
  if (at > now + maxMs + CLOCK_SLACK_MS) {
    throw invalid('/expires_at', `must be at most ${ctx.config.apiKeys.maxTtlDays} days ahead`);
  }
  return at;
}

/** The owner a create names: the caller, a user an admin names, or an organization. */
async function ownerFor(
  ctx: AppContext,
  caller: UserRow | null,
  body: CreateKeyBody,
): Promise<{ type: 'user' | 'organization'; id: string; user: UserRow | null }> {
  if (body.organization_id !== undefined && body.user_id !== undefined) {
    throw invalid('/organization_id', 'must not be given with user_id');
  }
  if (body.organization_id !== undefined) {
    const orgId = body.organization_id.toLowerCase();
    const orgs = organizationsOf(ctx);
    const org = UUID.test(orgId) ? await orgs.organization(ctx, orgId) : null;
    const standing = org === null || caller === null ? null : await orgs.standing(ctx, orgId, caller.id);
    const admin = caller === null || caller.role === 'admin';
    if (org === null || (!admin && standing === null)) {
      throw new ApiError('organization_not_found', { detail: 'No such organization' });
    }
    if (!admin && standing !== 'manager') {
      throw new ApiError('forbidden', {
        detail: 'Creating its keys needs org:settings:manage in the organization',
      });
    }
    return { type: 'organization', id: orgId, user: null };
  }
  if (body.user_id === undefined) {
    if (caller === null) throw invalid('/user_id', 'is required');
    return { type: 'user', id: caller.id, user: caller };
  }
  const id = body.user_id.toLowerCase();
  if (caller !== null && caller.id !== id && caller.role !== 'admin') {
    throw new ApiError('forbidden', { detail: 'Only an admin may create keys for another user' });
  }
  const user = UUID.test(id) ? await findUserById(ctx.db, id) : undefined;
  if (!user) throw new ApiError('not_found', { detail: 'No such user' });
  return { type: 'user', id, user };
}

/**
 * POST /api/v1/api-keys (and `gatehouse keys create`, caller null = the operator): the key is in
 * this answer only; only its hash is stored. Every check runs before anything is written.
 */
export async function createKey(
  ctx: AppContext,
  directory: ModuleDirectory,
  caller: UserRow | null,
  body: CreateKeyBody,
  by: ChangedBy,
): Promise<ApiKeyWithSecret> {
  const now = Date.now();
  const owner = await ownerFor(ctx, caller, body);
  const scopes = checkScopes(ctx, directory, body.scopes, caller);
  const expiresAt = checkExpiry(ctx, body.expires_at, now);
  const key = newKey();
  const row: ApiKeyRow = {
    id: uuidv7(),
    name: body.name,
    prefix: key.slice(0, SHOWN_CHARS),
    key_hash: hashKey(key),
    owner_type: owner.type,
    owner_id: owner.id,
    scopes: scopes === null ? null : JSON.stringify(scopes),
    expires_at: expiresAt,
    rate_requests: body.rate_limit?.requests ?? null,
    rate_window_s: body.rate_limit?.window_s ?? null,
    last_used_at: null,
    created_at: now,
    created_by: caller?.id ?? owner.id,
    revoked_at: null,
  };
  const ownerKey = `${owner.type}:${owner.id}`;
  const create = () =>
    ctx.db.transaction().execute(async (trx) => {
      await lockOwner(trx, ctx.database.dialect, ownerKey);
      if ((await countLiveKeys(trx, owner.type, owner.id, now)) >= LIVE_KEYS_PER_OWNER) {
        throw new ApiError('key_limit', { detail: `At most ${LIVE_KEYS_PER_OWNER} live keys per owner` });
      }
      await insertKey(trx, row);
      await recordAudit(trx, {
        action: 'api_key.create',
        actor: by.actor,
        target: { type: 'api_key', id: row.id },
        client: by.client,
        details: { api_key: eventView(row) },
      });
    });
  // PostgreSQL: in turns per owner before the pool (owner-turns.ts); SQLite has one connection and no lock.
  await (ctx.database.dialect === 'postgres' ? inOwnerTurn(ownerKey, create) : create());
  return { ...toPublicKey(row), key };
}

/** Whether the caller may see and revoke this key (else it answers 404, no enumeration). */
async function mayManage(ctx: AppContext, caller: UserRow | null, row: ApiKeyRow): Promise<boolean> {
  if (caller === null || caller.role === 'admin') return true;
  if (row.owner_type === 'user') return row.owner_id === caller.id;
  return (await organizationsOf(ctx).standing(ctx, row.owner_id, caller.id)) === 'manager';
}

async function visibleKey(ctx: AppContext, caller: UserRow | null, rawId: string): Promise<ApiKeyRow> {
  const id = rawId.toLowerCase();
  const row = UUID.test(id) ? await findUnrevokedKey(ctx.db, id) : undefined;
  if (!row || !(await mayManage(ctx, caller, row))) throw keyNotFound();
  return row;
}

/** GET /api/v1/api-keys/<id>. */
export async function getKey(ctx: AppContext, caller: UserRow, rawId: string): Promise<PublicApiKey> {
  return toPublicKey(await visibleKey(ctx, caller, rawId));
}

/** DELETE /api/v1/api-keys/<id> (and `gatehouse keys revoke`): revoked at once, on every instance. */
export async function revokeKey(
  ctx: AppContext,
  caller: UserRow | null,
  rawId: string,
  by: ChangedBy,
): Promise<void> {
  const row = await visibleKey(ctx, caller, rawId);
  const now = Date.now();
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await markRevoked(trx, row.id, now))) throw keyNotFound();
    await recordAudit(trx, {
      action: 'api_key.revoke',
      actor: by.actor,
      target: { type: 'api_key', id: row.id },
      client: by.client,
      details: { api_key: eventView(row), reason: 'deleted' },
    });
  });
  await dropWindow(ctx.db, `api_key:${row.id}`);
}

/**
 * Revokes every key of an owner that is being deleted, in the deletion's transaction, with an
 * `api_key.revoked` event for each (docs/api.md §22). Called by the users module's delete (and the
 * organizations module's, once it calls it: docs/api-keys.md).
 */
export async function revokeOwnerKeys(
  trx: Db,
  owner: { type: 'user' | 'organization'; id: string },
  by: ChangedBy,
): Promise<number> {
  const rows = await revokeOwnerKeyRows(trx, owner.type, owner.id, Date.now());
  await recordAudits(
    trx,
    rows.map((row) => ({
      action: 'api_key.revoke' as const,
      actor: by.actor,
      target: { type: 'api_key' as const, id: row.id },
      client: by.client,
      details: { api_key: eventView(row), reason: 'owner_deleted' },
    })),
  );
  return rows.length;
}

interface Cursor {
  c: number;
  i: string;
}

function readCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (Number.isSafeInteger(c.c) && typeof c.i === 'string' && c.i.length <= 64) return c;
  } catch {
    // Falls through to the one answer for every bad cursor.
  }
  throw new ApiError('validation_failed', {
    detail: 'querystring/cursor is not a cursor of this list',
    errors: [{ path: '/cursor', message: 'is not a cursor of this list' }],
  });
}

/**
 * GET /api/v1/api-keys: the caller's own keys; an admin's `?owner=` names any owner (none: every
 * key); a non-admin's `?owner=` only an organization they manage (else 403). Newest first, keyset pages.
 */
export async function listKeys(
  ctx: AppContext,
  caller: UserRow | null,
  query: ListKeysQuery,
): Promise<KeyPage> {
  let owner: { type: 'user' | 'organization'; id: string } | null = null;
  const admin = caller === null || caller.role === 'admin';
  if (query.owner !== undefined) {
    const sep = query.owner.indexOf(':');
    const type = query.owner.slice(0, sep) as 'user' | 'organization';
    const id = query.owner.slice(sep + 1).toLowerCase();
    owner = { type, id };
    if (!admin) {
      const manages =
        type === 'organization' &&
        UUID.test(id) &&
        (await organizationsOf(ctx).standing(ctx, id, caller.id)) === 'manager';
      if (!manages && !(type === 'user' && id === caller.id)) {
        throw new ApiError('forbidden', { detail: "Only an admin may list another owner's keys" });
      }
    }
  } else if (!admin) {
    owner = { type: 'user', id: caller.id };
  }
  const after = query.cursor === undefined ? null : readCursor(query.cursor);
  const rows = await selectKeyPage(ctx.db, {
    owner,
    after: after && { createdAt: after.c, id: after.i },
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    data: page.map(toPublicKey),
    next_cursor:
      rows.length > query.limit && last
        ? Buffer.from(JSON.stringify({ c: Number(last.created_at), i: last.id })).toString('base64url')
        : null,
  };
}

/**
 * The organizations' deletion hook (docs/api-keys.md): the organizations module's delete does not
 * call this module (that would be an import cycle), so this job revokes the keys of organizations
 * that are gone, with an `api_key.revoked` event each. Until it runs, such a key already answers
 * `revoked` (its owner cannot be read).
 */
export async function revokeOrphanedOrganizationKeys(ctx: AppContext): Promise<number> {
  let n = 0;
  for (const { owner_id } of await orphanedOrganizationKeys(ctx.db)) {
    n += await ctx.db
      .transaction()
      .execute((trx) =>
        revokeOwnerKeys(
          trx,
          { type: 'organization', id: owner_id },
          { actor: { type: 'system' }, client: null },
        ),
      );
  }
  return n;
}
