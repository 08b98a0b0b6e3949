import { v7 as uuidv7 } from 'uuid';
import type { UserRow } from '../../src/platform/db/schema.ts';
import type { TestApp } from '../helpers/app.ts';

/**
 * Organizations and memberships written straight to the tables: the invitation tests need them as
 * ground to stand on, not the endpoints that make them (test/organizations/ tests those).
 */
export async function createOrganization(
  t: TestApp,
  fields: { name?: string; slug?: string; require_mfa?: boolean } = {},
): Promise<{ id: string; name: string; slug: string }> {
  const now = Date.now();
  const id = uuidv7();
  const name = fields.name ?? `Org ${id.slice(-6)}`;
  const slug = fields.slug ?? `org-${id.slice(-12)}`;
  await t.ctx.db
    .insertInto('organizations')
    .values({
      id,
      name,
      slug,
      join_by_domain: 0,
      default_roles: '["member"]',
      require_mfa: fields.require_mfa ? 1 : 0,
      metadata: '{}',
      member_count: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { id, name, slug };
}

/** Makes the user a member of the organization with these roles. */
export async function addMember(t: TestApp, orgId: string, user: UserRow, roles: string[]): Promise<void> {
  await t.ctx.db
    .insertInto('organization_members')
    .values({ organization_id: orgId, user_id: user.id, joined_at: Date.now() })
    .execute();
  if (roles.length > 0) {
    await t.ctx.db
      .insertInto('organization_member_roles')
      .values(roles.map((role) => ({ organization_id: orgId, user_id: user.id, role })))
      .execute();
  }
  await t.ctx.db
    .updateTable('organizations')
    .set((eb) => ({ member_count: eb('member_count', '+', 1) }))
    .where('id', '=', orgId)
    .execute();
}

/** A role of the catalogue, written directly. */
export async function createRole(t: TestApp, name: string, permissions: string[]): Promise<void> {
  const now = Date.now();
  await t.ctx.db
    .insertInto('roles')
    .values({
      name,
      description: '',
      permissions: JSON.stringify(permissions),
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** The invitation rows of an organization. */
export function invitationRows(t: TestApp, orgId: string) {
  return t.ctx.db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('organization_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The user's roles in an organization, or null when not a member. */
export async function memberRoles(t: TestApp, orgId: string, userId: string): Promise<string[] | null> {
  const member = await t.ctx.db
    .selectFrom('organization_members')
    .select('user_id')
    .where('organization_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!member) return null;
  const rows = await t.ctx.db
    .selectFrom('organization_member_roles')
    .select('role')
    .where('organization_id', '=', orgId)
    .where('user_id', '=', userId)
    .orderBy('role')
    .execute();
  return rows.map((r) => r.role);
}

/** The token at the end of a join link. */
export function tokenOfUrl(url: string): string {
  const match = /\/account\/organizations\/join\/([A-Za-z0-9_-]{43})$/.exec(url);
  if (!match?.[1]) throw new Error(`not a join link: ${url}`);
  return match[1];
}
