import type { Transaction } from 'kysely';
import { scimPatch } from 'scim-patch';
import {
  type ClientInfo,
  findUserByEmail,
  findUserById,
  insertUser,
  newUserRow,
  recordAudits,
  updateUser,
} from '../../../identity/index.ts';
import { endOutstandingLinks } from '../../../identity/links/credential-events.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { DB, Db } from '../../../platform/db/schema.ts';
import { type ScimOrganization, scimJoin } from '../../organizations/index.ts';
import {
  countVisible,
  deleteScimUser,
  findScimUser,
  isMember,
  pageInactiveIds,
  pageMemberIds,
  updateScimUser,
  userIdsByExternalId,
  userViews,
} from './scim.queries.ts';
import { resourceNotFound, ScimError, uniqueness, uniqueTransaction } from './scim-errors.ts';
import { paging, userFilter } from './scim-filter.ts';
import { leaveAllGroups } from './scim-groups.queries.ts';
import { atDomains, deactivate, ensureScimUser, reactivate } from './scim-lifecycle.ts';
import { patchRefusal, readOperations } from './scim-patch-op.ts';
import {
  attr,
  LIST_SCHEMA,
  readActive,
  readName,
  readUserInput,
  readUserName,
  type ScimUser,
  scimBase,
  toScimUser,
  type UserInput,
} from './scim-user-view.ts';

/*
 * SCIM Users of one organization (docs/api.md §23, RFC 7644 §3): a token sees only its
 * organization's members and the people SCIM deactivated there; any other id is 404.
 */

/** Whether SCIM shows this user to the organization: a member, or one SCIM knows there. */
async function visible(db: Db, orgId: string, userId: string): Promise<boolean> {
  return (await isMember(db, orgId, userId)) || (await findScimUser(db, orgId, userId)) !== undefined;
}

async function viewsInOrder(ctx: AppContext, orgId: string, ids: readonly string[], db: Db = ctx.db) {
  const base = scimBase(ctx.config.publicUrl);
  const byId = new Map((await userViews(db, orgId, ids)).map((v) => [v.id, v]));
  return ids.flatMap((id) => {
    const v = byId.get(id);
    return v ? [toScimUser(v, base)] : [];
  });
}

async function one(ctx: AppContext, orgId: string, userId: string, db: Db = ctx.db): Promise<ScimUser> {
  const [user] = await viewsInOrder(ctx, orgId, [userId], db);
  if (!user) throw resourceNotFound('User', userId);
  return user;
}

/** GET /Users/<id>. */
export async function getScimUser(ctx: AppContext, org: ScimOrganization, id: string): Promise<ScimUser> {
  if (!(await visible(ctx.db, org.id, id))) throw resourceNotFound('User', id);
  return one(ctx, org.id, id);
}

/** GET /Users: filtered, or every visible user (members by id, then the deactivated), paged. */
export async function listScimUsers(
  ctx: AppContext,
  org: ScimOrganization,
  query: { filter?: string; startIndex?: string; count?: string },
) {
  const { start, count } = paging(query);
  let ids: string[];
  let total: number;
  if (query.filter !== undefined && query.filter !== '') {
    const f = userFilter(query.filter);
    let candidates: string[] = [];
    if (f.by === 'email') {
      const user = await findUserByEmail(ctx.db, f.value.trim().toLowerCase());
      candidates = user ? [user.id] : [];
    } else {
      candidates = await userIdsByExternalId(ctx.db, org.id, f.value);
    }
    const matching: string[] = [];
    for (const id of candidates) if (await visible(ctx.db, org.id, id)) matching.push(id);
    total = matching.length;
    ids = matching.slice(start - 1, start - 1 + count);
  } else {
    const { members, inactive } = await countVisible(ctx.db, org.id);
    total = members + inactive;
    const offset = start - 1;
    ids = count === 0 ? [] : offset < members ? await pageMemberIds(ctx.db, org.id, count, offset) : [];
    const rest = count - ids.length;
    if (rest > 0) ids.push(...(await pageInactiveIds(ctx.db, org.id, rest, Math.max(0, offset - members))));
  }
  const resources = await viewsInOrder(ctx, org.id, ids);
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex: start,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/**
 * POST /Users: a new person joins with the organization's `default_roles`, verified only at its
 * domains. An existing account at the domains joins; any other existing account is 409 uniqueness
 * (that person joins by invitation), as is one SCIM already shows there.
 */
export async function createScimUser(
  ctx: AppContext,
  org: ScimOrganization,
  body: unknown,
  client: ClientInfo,
): Promise<ScimUser> {
  const input = readUserInput(body);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const existing = await findUserByEmail(trx, input.email);
      let userId: string;
      const events = [];
      if (existing) {
        if (await visible(trx, org.id, existing.id))
          throw uniqueness('A user with this userName exists in this organization');
        if (!atDomains(org, existing.email) || existing.kind !== 'person') {
          throw uniqueness(
            'An account with this userName exists outside this organization: invite that person instead',
          );
        }
        userId = existing.id;
      } else {
        const row = newUserRow(
          {
            created_via: 'scim',
            email: input.email,
            name: input.name ?? '',
            email_verified: atDomains(org, input.email) ? 1 : 0,
          },
          Date.now(),
        );
        await insertUser(trx, row);
        userId = row.id;
        events.push({
          action: 'user.create' as const,
          actor: { type: 'system' as const },
          target: { type: 'user' as const, id: row.id },
          client,
          details: { role: row.role, via: 'scim', organization_id: org.id },
        });
      }
      const joined = await scimJoin(trx, org, userId, org.defaultRoles, client);
      if (joined) events.push(joined);
      await ensureScimUser(trx, org.id, userId);
      await updateScimUser(trx, org.id, userId, { external_id: input.externalId, updated_at: Date.now() });
      await recordAudits(trx, events);
      if (!input.active) await deactivate(trx, org, userId, client);
      return one(ctx, org.id, userId, trx);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw uniqueness('A user with this userName exists');
    throw err;
  }
}

/** Applies what a PUT or a PATCH leaves the resource saying. */
async function applyUser(
  trx: Db,
  org: ScimOrganization,
  id: string,
  input: UserInput,
  client: ClientInfo,
): Promise<void> {
  const user = await findUserById(trx, id);
  if (!user) throw resourceNotFound('User', id);
  const events = [];
  const fields: string[] = [];
  const patch: { name?: string; email?: string; email_verified?: number } = {};
  if (input.name !== null && input.name !== user.name) {
    patch.name = input.name;
    fields.push('name');
  }
  if (input.email !== user.email) {
    // An organization's IdP moves only addresses the organization vouches for: otherwise it could
    // take over a personal account that joined by invitation (its resets would go to the new address).
    if (!atDomains(org, user.email)) {
      throw new ScimError(
        400,
        'userName of an account outside the organization’s domains is changed by its owner',
        'mutability',
      );
    }
    patch.email = input.email;
    patch.email_verified = atDomains(org, input.email) ? 1 : 0;
    fields.push('email');
  }
  if (fields.length > 0) {
    await updateUser(trx, id, patch);
    // docs/api.md §16: a completed address change ends every outstanding link.
    if (patch.email !== undefined) await endOutstandingLinks(trx as Transaction<DB>, id);
    events.push({
      action: 'user.update' as const,
      actor: { type: 'system' as const },
      target: { type: 'user' as const, id },
      client,
      details: { fields, via: 'scim' },
    });
  }
  await recordAudits(trx, events);
  await ensureScimUser(trx, org.id, id);
  await updateScimUser(trx, org.id, id, { external_id: input.externalId, updated_at: Date.now() });
  const row = await findScimUser(trx, org.id, id);
  const active = row?.active === 1 && (await isMember(trx, org.id, id));
  if (active && !input.active) await deactivate(trx, org, id, client);
  if (!active && input.active) await reactivate(trx, org, id, client);
}

const USERNAME_TAKEN = 'Another account has this userName';

/** PUT /Users/<id>: the resource as sent (a missing externalId clears it; a password is ignored). */
export async function replaceScimUser(
  ctx: AppContext,
  org: ScimOrganization,
  id: string,
  body: unknown,
  client: ClientInfo,
): Promise<ScimUser> {
  if (!(await visible(ctx.db, org.id, id))) throw resourceNotFound('User', id);
  const input = readUserInput(body);
  return uniqueTransaction(ctx, USERNAME_TAKEN, async (trx) => {
    await applyUser(trx, org, id, input, client);
    return one(ctx, org.id, id, trx);
  });
}

/**
 * PATCH /Users/<id>: the operations applied by scim-patch to the resource as it is, then read like
 * a PUT. Answers 200 with the resource.
 */
export async function patchScimUser(
  ctx: AppContext,
  org: ScimOrganization,
  id: string,
  body: unknown,
  client: ClientInfo,
): Promise<ScimUser> {
  if (!(await visible(ctx.db, org.id, id))) throw resourceNotFound('User', id);
  const ops = readOperations(body);
  return uniqueTransaction(ctx, USERNAME_TAKEN, async (trx) => {
    const before = await one(ctx, org.id, id, trx);
    let after: Record<string, unknown>;
    try {
      after = scimPatch(structuredClone(before) as never, ops, { mutateDocument: false }) as Record<
        string,
        unknown
      >;
    } catch (err) {
      patchRefusal(err);
    }
    // A changed given or family name (Okta, Entra ID) names the person when `formatted` was kept.
    const name = after.name as Record<string, unknown> | undefined;
    const formattedKept = name?.formatted === before.name.formatted;
    const displayChanged = after.displayName !== before.displayName;
    const reading = { ...after, name: formattedKept ? { ...name, formatted: undefined } : name };
    if (!displayChanged && formattedKept) delete (reading as Record<string, unknown>).displayName;
    const input: UserInput = {
      email: readUserName(attr(after, 'userName')),
      name: readName(reading) ?? before.name.formatted,
      externalId: typeof after.externalId === 'string' ? after.externalId : null,
      active: readActive(attr(after, 'active')),
    };
    await applyUser(trx, org, id, input, client);
    return one(ctx, org.id, id, trx);
  });
}

/** DELETE /Users/<id>: deactivation, then SCIM forgets the person there (404 afterwards). */
export async function removeScimUser(ctx: AppContext, org: ScimOrganization, id: string, client: ClientInfo) {
  await uniqueTransaction(ctx, USERNAME_TAKEN, async (trx) => {
    if (!(await visible(trx, org.id, id))) throw resourceNotFound('User', id);
    await deactivate(trx, org, id, client);
    await leaveAllGroups(trx, org.id, id);
    await deleteScimUser(trx, org.id, id);
  });
}
