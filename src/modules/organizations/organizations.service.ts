import { v7 as uuidv7 } from 'uuid';
import { type AuditEvent, recordAudits } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { Db } from '../../platform/db/schema.ts';
import { orgAccess, requirePermission } from './access.ts';
import { type Caller, invalid, isAdmin, iso, organizationNotFound, roleNotFound } from './common.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { insertMember } from './members.queries.ts';
import {
  deleteOrganization,
  domainHeldElsewhere,
  domainsOf,
  insertOrganization,
  type OrganizationRow,
  organizationsByIds,
  pageOrganizations,
  replaceDomains,
  slugsLike,
  slugTaken,
  updateOrganization,
} from './organizations.queries.ts';
import {
  type CreateOrganizationBody,
  DOMAIN,
  type ListQuery,
  type OrganizationPage,
  type PublicOrganization,
  type UpdateOrganizationBody,
} from './organizations.schemas.ts';
import { membershipsOf, parseNames } from './reads.ts';
import { existingRoleNames } from './roles.queries.ts';

const METADATA_MAX_BYTES = 4096;
const DOMAIN_RE = new RegExp(DOMAIN);

/** `data.organization` of the organization's events (docs/api.md §21, settled details). */
export const eventOrganization = (o: Pick<OrganizationRow, 'id' | 'slug' | 'name'>) => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
});

export function toPublicOrganization(row: OrganizationRow, domains: readonly string[]): PublicOrganization {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    domains: [...domains],
    join_by_domain: row.join_by_domain === 1,
    default_roles: parseNames(row.default_roles),
    require_mfa: row.require_mfa === 1,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    scim_group_roles: JSON.parse(row.scim_group_roles) as Record<string, string[]>,
    sso_required: row.sso_required === 1,
    member_count: Number(row.member_count),
    created_at: iso(Number(row.created_at)),
    updated_at: iso(Number(row.updated_at)),
  };
}

async function withDomains(db: Db, rows: readonly OrganizationRow[]): Promise<PublicOrganization[]> {
  const domains = await domainsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toPublicOrganization(r, domains.get(r.id) ?? []));
}

/** docs/api.md §21: lower-cased, each run of other characters one `-`, trimmed to 63. */
export function slugFrom(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return slug === '' ? 'organization' : slug;
}

/** The first free slug of `base`, `base-2`, `base-3`… (each trimmed to fit 63 characters). */
async function freeSlug(db: Db, base: string): Promise<string> {
  const taken = new Set(await slugsLike(db, base));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate) && !(await slugTaken(db, candidate))) return candidate;
  }
}

function checkMetadata(metadata: Record<string, unknown>): string {
  const text = JSON.stringify(metadata);
  if (Buffer.byteLength(text, 'utf8') > METADATA_MAX_BYTES) {
    throw invalid('/metadata', `must be at most ${METADATA_MAX_BYTES} bytes as JSON`);
  }
  return text;
}

function normalizeDomains(domains: readonly string[]): string[] {
  const out = [...new Set(domains.map((d) => d.trim().toLowerCase().replace(/\.$/, '')))];
  out.forEach((d, i) => {
    if (!DOMAIN_RE.test(d)) throw invalid(`/domains/${i}`, 'is not an e-mail domain');
  });
  return out.sort();
}

async function checkRoles(db: Db, roles: readonly string[]): Promise<void> {
  const known = await existingRoleNames(db, roles);
  const unknown = roles.find((r) => !known.has(r));
  if (unknown !== undefined) throw roleNotFound(unknown);
}

async function claimDomains(db: Db, id: string, domains: readonly string[]): Promise<void> {
  const held = await domainHeldElsewhere(db, domains, id);
  if (held !== undefined) throw domainTaken(held);
  try {
    await replaceDomains(db, id, domains);
  } catch (err) {
    if (isUniqueViolation(err)) throw domainTaken(domains.join(', '));
    throw err;
  }
}

const domainTaken = (domain: string) =>
  new ApiError('organization_exists', { detail: `Another organization holds the domain ${domain}` });
const slugExists = () =>
  new ApiError('organization_exists', { detail: 'An organization with this slug exists' });
const domainsAdminOnly = () =>
  new ApiError('forbidden', { detail: 'Only admins set an organization’s domains and sso_required' });
const groupRolesAdminOnly = () =>
  new ApiError('forbidden', { detail: 'Only admins set an organization’s scim_group_roles' });

/** organizations.list: an admin pages through every organization; anyone else gets their own, with roles. */
export async function listOrganizations(
  ctx: AppContext,
  query: ListQuery,
  caller: Caller,
): Promise<OrganizationPage> {
  if (!isAdmin(caller)) {
    const memberships = await membershipsOf(ctx, caller.auth.user.id);
    const rows = await organizationsByIds(
      ctx.db,
      memberships.map((m) => m.id),
    );
    const roles = new Map(memberships.map((m) => [m.id, m.roles]));
    const data = (await withDomains(ctx.db, rows)).map((o) => ({ ...o, roles: roles.get(o.id) ?? [] }));
    return { data, next_cursor: null };
  }
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor, { id: 'string' }).id;
  const rows = await pageOrganizations(ctx.db, query.limit + 1, after, query.q ?? null);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    data: await withDomains(ctx.db, page),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ id: last.id }) : null,
  };
}

/** organizations.create: an admin (no member added), or any active user under ORGANIZATIONS_SELF_SERVICE. */
export async function createOrganization(
  ctx: AppContext,
  body: CreateOrganizationBody,
  caller: Caller,
): Promise<PublicOrganization> {
  const admin = isAdmin(caller);
  if (!admin && !ctx.config.organizations.selfService) {
    throw new ApiError('forbidden', { detail: 'Only admins create organizations' });
  }
  if (!admin && body.scim_group_roles !== undefined) throw groupRolesAdminOnly();
  if (!admin && (body.domains !== undefined || body.sso_required !== undefined)) throw domainsAdminOnly();
  const domains = normalizeDomains(body.domains ?? []);
  const metadata = checkMetadata(body.metadata ?? {});
  const defaultRoles = body.default_roles ?? ['member'];
  for (let tries = 0; ; tries++) {
    try {
      return await ctx.db.transaction().execute(async (trx) => {
        await checkRoles(trx, defaultRoles);
        await checkRoles(trx, Object.values(body.scim_group_roles ?? {}).flat());
        if (body.slug !== undefined && (await slugTaken(trx, body.slug))) throw slugExists();
        const slug = body.slug ?? (await freeSlug(trx, slugFrom(body.name)));
        const now = Date.now();
        const row: OrganizationRow = {
          id: uuidv7(),
          name: body.name,
          slug,
          join_by_domain: body.join_by_domain ? 1 : 0,
          default_roles: JSON.stringify(defaultRoles),
          require_mfa: body.require_mfa ? 1 : 0,
          metadata,
          scim_group_roles: JSON.stringify(body.scim_group_roles ?? {}),
          sso_required: body.sso_required ? 1 : 0,
          member_count: 0,
          created_at: now,
          updated_at: now,
        };
        await insertOrganization(trx, row);
        await claimDomains(trx, row.id, domains);
        const organization = eventOrganization(row);
        const events: AuditEvent[] = [
          {
            action: 'organization.created',
            actor: caller.actor,
            target: { type: 'organization', id: row.id },
            client: caller.client,
            details: { organization },
          },
        ];
        if (!admin) {
          // The self-service creator joins with ORGANIZATIONS_CREATOR_ROLES (those in the catalogue).
          const known = await existingRoleNames(trx, ctx.config.organizations.creatorRoles);
          const roles = ctx.config.organizations.creatorRoles.filter((r) => known.has(r));
          await insertMember(trx, row.id, caller.auth.user.id, roles, now);
          row.member_count = 1;
          events.push({
            action: 'organization.member.added',
            actor: caller.actor,
            target: { type: 'organization', id: row.id },
            client: caller.client,
            details: { organization, user_id: caller.auth.user.id, roles },
          });
        }
        await recordAudits(trx, events);
        return toPublicOrganization(row, domains);
      });
    } catch (err) {
      // A concurrent creation took the made-up slug first: make the next one (an explicit slug: 409).
      if (isUniqueViolation(err) && body.slug === undefined && tries < 5) continue;
      if (isUniqueViolation(err)) throw body.slug === undefined ? err : slugExists();
      throw err;
    }
  }
}

/** organizations.get: an admin, or a member. */
export async function getOrganization(
  ctx: AppContext,
  id: string,
  caller: Caller,
): Promise<PublicOrganization> {
  const { org } = await orgAccess(ctx, id, caller);
  return (await withDomains(ctx.db, [org]))[0] as PublicOrganization;
}

/** organizations.update: an admin, or a member holding `org:settings:manage` for all but `domains`. */
export async function patchOrganization(
  ctx: AppContext,
  modules: ModuleDirectory,
  id: string,
  body: UpdateOrganizationBody,
  caller: Caller,
): Promise<PublicOrganization> {
  const domains = body.domains === undefined ? undefined : normalizeDomains(body.domains);
  const metadata = body.metadata === undefined ? undefined : checkMetadata(body.metadata);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const access = await orgAccess(ctx, id, caller, trx);
      requirePermission(access, 'org:settings:manage');
      if (!access.admin && body.scim_group_roles !== undefined) throw groupRolesAdminOnly();
      if (!access.admin && (domains !== undefined || body.sso_required !== undefined))
        throw domainsAdminOnly();
      if (body.default_roles !== undefined) await checkRoles(trx, body.default_roles);
      if (body.scim_group_roles !== undefined)
        await checkRoles(trx, Object.values(body.scim_group_roles).flat());
      if (body.slug !== undefined && (await slugTaken(trx, body.slug, id))) throw slugExists();
      const now = Date.now();
      await updateOrganization(trx, id, {
        ...(body.name !== undefined && { name: body.name }),
        ...(body.slug !== undefined && { slug: body.slug }),
        ...(body.join_by_domain !== undefined && { join_by_domain: body.join_by_domain ? 1 : 0 }),
        ...(body.default_roles !== undefined && { default_roles: JSON.stringify(body.default_roles) }),
        ...(body.require_mfa !== undefined && { require_mfa: body.require_mfa ? 1 : 0 }),
        ...(metadata !== undefined && { metadata }),
        ...(body.scim_group_roles !== undefined && {
          scim_group_roles: JSON.stringify(body.scim_group_roles),
        }),
        ...(body.sso_required !== undefined && { sso_required: body.sso_required ? 1 : 0 }),
        updated_at: now,
      });
      if (domains !== undefined) await claimDomains(trx, id, domains);
      // docs/api.md §23: a changed map re-applies to the current members of the organization's groups.
      if (body.scim_group_roles !== undefined)
        await modules.offer('sso').groupRolesChanged(trx, id, caller.client);
      const rows = await organizationsByIds(trx, [id]);
      const row = rows[0];
      if (!row) throw organizationNotFound();
      await recordAudits(trx, [
        {
          action: 'organization.updated',
          actor: caller.actor,
          target: { type: 'organization', id },
          client: caller.client,
          details: { organization: eventOrganization(row), fields: Object.keys(body).sort() },
        },
      ]);
      return (await withDomains(trx, [row]))[0] as PublicOrganization;
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw body.slug !== undefined ? slugExists() : domainTaken(String(domains ?? ''));
    throw err;
  }
}

/** organizations.delete (admin): its memberships, roles there, domains and invitations go with it. */
export async function removeOrganization(ctx: AppContext, id: string, caller: Caller): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const rows = await organizationsByIds(trx, [id]);
    const row = rows[0];
    if (!row || !(await deleteOrganization(trx, id))) throw organizationNotFound();
    await recordAudits(trx, [
      {
        action: 'organization.deleted',
        actor: caller.actor,
        target: { type: 'organization', id },
        client: caller.client,
        details: { organization: eventOrganization(row), member_count: Number(row.member_count) },
      },
    ]);
  });
}
