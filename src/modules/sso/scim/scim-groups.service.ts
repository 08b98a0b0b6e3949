import { scimPatch } from 'scim-patch';
import { v7 as uuidv7 } from 'uuid';
import { type ClientInfo, recordAudits } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { Db } from '../../../platform/db/schema.ts';
import type { ScimOrganization } from '../../organizations/index.ts';
import { findScimUser, isMember, type ScimGroupRow } from './scim.queries.ts';
import { invalidSyntax, invalidValue, resourceNotFound, uniqueTransaction } from './scim-errors.ts';
import { groupFilter, paging } from './scim-filter.ts';
import {
  addGroupMember,
  clearGroupMembers,
  deleteGroup,
  findGroup,
  insertGroup,
  membersOfGroups,
  pageGroups,
  removeGroupMember,
  updateGroup,
} from './scim-groups.queries.ts';
import { applyGroupRoles } from './scim-lifecycle.ts';
import { patchRefusal, readOperations } from './scim-patch-op.ts';
import { attr, GROUP_SCHEMA, LIST_SCHEMA, scimBase } from './scim-user-view.ts';

/*
 * SCIM Groups of one organization (docs/api.md §23). A group's displayName maps to roles through the
 * organization's `scim_group_roles`; membership changes re-apply the roles of the people they touch.
 */

interface ScimGroup {
  schemas: string[];
  id: string;
  externalId?: string;
  displayName: string;
  members?: Array<{ value: string; display: string; $ref: string }>;
  meta: { resourceType: 'Group'; created: string; lastModified: string; location: string };
}

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

function toScimGroup(
  g: ScimGroupRow,
  members: Array<{ id: string; email: string }> | null,
  base: string,
): ScimGroup {
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.external_id !== null && { externalId: g.external_id }),
    displayName: g.display_name,
    ...(members !== null && {
      members: members.map((m) => ({ value: m.id, display: m.email, $ref: `${base}/Users/${m.id}` })),
    }),
    meta: {
      resourceType: 'Group',
      created: iso(g.created_at),
      lastModified: iso(g.updated_at),
      location: `${base}/Groups/${g.id}`,
    },
  };
}

async function one(ctx: AppContext, org: ScimOrganization, id: string, db: Db = ctx.db): Promise<ScimGroup> {
  const g = await findGroup(db, org.id, id);
  if (!g) throw resourceNotFound('Group', id);
  const members = await membersOfGroups(db, [g.id]);
  return toScimGroup(g, members.get(g.id) ?? [], scimBase(ctx.config.publicUrl));
}

const excludesMembers = (excluded: string | undefined) =>
  (excluded ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .includes('members');

/** GET /Groups (filter `displayName eq`, `excludedAttributes=members`). */
export async function listScimGroups(
  ctx: AppContext,
  org: ScimOrganization,
  query: { filter?: string; startIndex?: string; count?: string; excludedAttributes?: string },
) {
  const { start, count } = paging(query);
  const name = query.filter !== undefined && query.filter !== '' ? groupFilter(query.filter) : null;
  const { rows, total } = await pageGroups(ctx.db, org.id, name, count, start - 1);
  const withMembers = !excludesMembers(query.excludedAttributes);
  const members = withMembers
    ? await membersOfGroups(
        ctx.db,
        rows.map((r) => r.id),
      )
    : new Map();
  const base = scimBase(ctx.config.publicUrl);
  const resources = rows.map((g) => toScimGroup(g, withMembers ? (members.get(g.id) ?? []) : null, base));
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex: start,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** GET /Groups/<id> (with `excludedAttributes=members`, without them). */
export async function getScimGroup(ctx: AppContext, org: ScimOrganization, id: string, excluded?: string) {
  const group = await one(ctx, org, id);
  if (excludesMembers(excluded)) delete group.members;
  return group;
}

/** The user ids of a `members` value: each `{"value": "<user id>"}` of the organization, else 400. */
async function memberIds(db: Db, org: ScimOrganization, value: unknown): Promise<string[]> {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  const ids: string[] = [];
  for (const m of list) {
    const id = typeof m === 'object' && m !== null ? attr(m as Record<string, unknown>, 'value') : undefined;
    if (typeof id !== 'string') throw invalidValue('Each member is an object with the user id as "value"');
    if (!(await isMember(db, org.id, id)) && !(await findScimUser(db, org.id, id))) {
      throw invalidValue(`No user ${id.slice(0, 64)} in this organization`);
    }
    ids.push(id);
  }
  return ids;
}

function readDisplayName(body: Record<string, unknown>): string {
  const name = attr(body, 'displayName');
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    throw invalidValue('displayName is required (1–200 characters)');
  }
  return name;
}

async function writeMembers(trx: Db, groupId: string, ids: readonly string[], touched: Set<string>) {
  for (const id of ids) {
    await addGroupMember(trx, groupId, id);
    touched.add(id);
  }
}

const GROUP_TAKEN = 'A group with this displayName exists in this organization';

async function reapply(trx: Db, org: ScimOrganization, touched: Set<string>, client: ClientInfo) {
  const events = [];
  for (const id of [...touched].sort()) events.push(...(await applyGroupRoles(trx, org, id, client)));
  await recordAudits(trx, events);
}

/** POST /Groups. */
export async function createScimGroup(
  ctx: AppContext,
  org: ScimOrganization,
  body: unknown,
  client: ClientInfo,
) {
  if (typeof body !== 'object' || body === null) throw invalidSyntax('The body must be a SCIM Group object');
  const o = body as Record<string, unknown>;
  const displayName = readDisplayName(o);
  const externalId = attr(o, 'externalId');
  return uniqueTransaction(ctx, GROUP_TAKEN, async (trx) => {
    const now = Date.now();
    const id = uuidv7();
    await insertGroup(trx, {
      id,
      organization_id: org.id,
      display_name: displayName,
      external_id: typeof externalId === 'string' ? externalId.slice(0, 256) : null,
      created_at: now,
      updated_at: now,
    });
    const touched = new Set<string>();
    await writeMembers(trx, id, await memberIds(trx, org, attr(o, 'members')), touched);
    await reapply(trx, org, touched, client);
    return one(ctx, org, id, trx);
  });
}

/**
 * PATCH /Groups/<id>: members added or removed (Entra ID: `{"op":"Add","path":"members","value":[…]}`,
 * `{"op":"Remove","path":"members[value eq \"…\"]"}`; Okta: `replace` of `members` or of the
 * displayName), applied by scim-patch to the group, then written as the difference.
 */
export async function patchScimGroup(
  ctx: AppContext,
  org: ScimOrganization,
  id: string,
  body: unknown,
  client: ClientInfo,
) {
  const ops = readOperations(body);
  return uniqueTransaction(ctx, GROUP_TAKEN, async (trx) => {
    const before = await one(ctx, org, id, trx);
    let after = structuredClone({ ...before, members: before.members ?? [] });
    for (const op of ops) {
      const removed = membersRemovedByValue(op);
      if (removed !== null) {
        // Entra ID's `{"op":"Remove","path":"members","value":[{"value":"<id>"}]}`, which scim-patch
        // leaves unapplied: those members leave (one who is not a member: nothing to do).
        after.members = (after.members ?? []).filter((m) => !removed.includes(m.value));
        continue;
      }
      try {
        after = scimPatch(after as never, [op], { mutateDocument: false }) as typeof after;
      } catch (err) {
        patchRefusal(err);
      }
    }
    const oldIds = new Set((before.members ?? []).map((m) => m.value));
    const newIds = new Set(await memberIds(trx, org, after.members ?? []));
    const touched = new Set<string>();
    for (const m of oldIds) {
      if (!newIds.has(m)) {
        await removeGroupMember(trx, id, m);
        touched.add(m);
      }
    }
    await writeMembers(
      trx,
      id,
      [...newIds].filter((m) => !oldIds.has(m)),
      touched,
    );
    const name = readDisplayName(after as unknown as Record<string, unknown>);
    const renamed = name !== before.displayName;
    await updateGroup(trx, id, {
      ...(renamed && { display_name: name }),
      ...(typeof after.externalId === 'string' && { external_id: after.externalId.slice(0, 256) }),
      updated_at: Date.now(),
    });
    // A renamed group maps to other roles: every member's roles are re-applied.
    if (renamed) for (const m of newIds) touched.add(m);
    await reapply(trx, org, touched, client);
    return one(ctx, org, id, trx);
  });
}

/** The user ids a `remove` of `members` with a value list names, else null. */
function membersRemovedByValue(op: { op: string; path?: string; value?: unknown }): string[] | null {
  if (op.op !== 'remove' || op.path?.toLowerCase() !== 'members' || !Array.isArray(op.value)) return null;
  return op.value.map((m) => {
    const id = typeof m === 'object' && m !== null ? attr(m as Record<string, unknown>, 'value') : undefined;
    if (typeof id !== 'string') throw invalidValue('Each member is an object with the user id as "value"');
    return id;
  });
}

/** PUT /Groups/<id>: displayName and members as sent. */
export async function replaceScimGroup(
  ctx: AppContext,
  org: ScimOrganization,
  id: string,
  body: unknown,
  client: ClientInfo,
) {
  if (typeof body !== 'object' || body === null) throw invalidSyntax('The body must be a SCIM Group object');
  const o = body as Record<string, unknown>;
  const displayName = readDisplayName(o);
  return uniqueTransaction(ctx, GROUP_TAKEN, async (trx) => {
    const before = await one(ctx, org, id, trx);
    const touched = new Set((before.members ?? []).map((m) => m.value));
    await clearGroupMembers(trx, id);
    const externalId = attr(o, 'externalId');
    await updateGroup(trx, id, {
      display_name: displayName,
      external_id: typeof externalId === 'string' ? externalId.slice(0, 256) : null,
      updated_at: Date.now(),
    });
    await writeMembers(trx, id, await memberIds(trx, org, attr(o, 'members')), touched);
    await reapply(trx, org, touched, client);
    return one(ctx, org, id, trx);
  });
}

/** DELETE /Groups/<id>: its members lose the roles only it gave. */
export async function removeScimGroup(
  ctx: AppContext,
  org: ScimOrganization,
  id: string,
  client: ClientInfo,
) {
  await uniqueTransaction(ctx, GROUP_TAKEN, async (trx) => {
    const before = await one(ctx, org, id, trx);
    await deleteGroup(trx, id);
    await reapply(trx, org, new Set((before.members ?? []).map((m) => m.value)), client);
  });
}
