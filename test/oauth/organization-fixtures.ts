import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/platform/db/schema.ts';
import type { OauthStack } from './support.ts';

/*
 * Roles, organizations and members for the organization-token tests, made through the admin API of
 * the `organizations` module (docs/api.md §21), as an operator would.
 */

export interface Organization {
  id: string;
  slug: string;
}

export function organizationFixtures(s: Pick<OauthStack, 'admin'>) {
  const ok = (res: { status: number; body: unknown }, statuses: number[]) => {
    assert.ok(statuses.includes(res.status), `${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  };
  return {
    async role(name: string, permissions: string[]) {
      ok(await s.admin('PUT', `/api/v1/roles/${name}`, { permissions }), [200, 201]);
    },
    async organization(name: string, extra: Record<string, unknown> = {}): Promise<Organization> {
      const made = ok(await s.admin('POST', '/api/v1/organizations', { name, ...extra }), [201]);
      return { id: String(made.id), slug: String(made.slug) };
    },
    async member(org: Organization, userId: string, roles: string[]) {
      ok(await s.admin('PUT', `/api/v1/organizations/${org.id}/members/${userId}`, { roles }), [200, 201]);
    },
    async removeMember(org: Organization, userId: string) {
      ok(await s.admin('DELETE', `/api/v1/organizations/${org.id}/members/${userId}`), [204]);
    },
    async globalRoles(userId: string, roles: string[]) {
      ok(await s.admin('PUT', `/api/v1/users/${userId}/roles`, { roles }), [200]);
    },
  };
}

/** The payload of a JWT, unchecked (the tests read what was signed; openid-client checks ID tokens). */
export function jwtPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(token.split('.')[1]), 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/**
 * The same fixtures written straight into the `organizations` module's tables, for while its admin
 * API is not on this branch (orgs-core lands it); the tests move to organizationFixtures then.
 */
export function organizationFixturesInDb(db: Kysely<DB>): ReturnType<typeof organizationFixtures> {
  const now = () => Date.now();
  return {
    async role(name, permissions) {
      await db
        .insertInto('roles')
        .values({
          name,
          description: '',
          permissions: JSON.stringify(permissions),
          created_at: now(),
          updated_at: now(),
        })
        .execute();
    },
    async organization(name, extra = {}) {
      const id = randomUUID();
      const slug = name.toLowerCase();
      await db
        .insertInto('organizations')
        .values({
          id,
          name,
          slug,
          join_by_domain: 0,
          default_roles: '["member"]',
          require_mfa: extra.require_mfa === true ? 1 : 0,
          metadata: '{}',
          member_count: 0,
          created_at: now(),
          updated_at: now(),
        })
        .execute();
      return { id, slug };
    },
    async member(org, userId, roles) {
      await db
        .insertInto('organization_members')
        .values({ organization_id: org.id, user_id: userId, joined_at: now() })
        .execute();
      for (const role of roles) {
        await db
          .insertInto('organization_member_roles')
          .values({ organization_id: org.id, user_id: userId, role })
          .execute();
      }
    },
    async removeMember(org, userId) {
      await db
        .deleteFrom('organization_member_roles')
        .where('organization_id', '=', org.id)
        .where('user_id', '=', userId)
        .execute();
      await db
        .deleteFrom('organization_members')
        .where('organization_id', '=', org.id)
        .where('user_id', '=', userId)
        .execute();
    },
    async globalRoles(userId, roles) {
      await db.deleteFrom('user_roles').where('user_id', '=', userId).execute();
      for (const role of roles) await db.insertInto('user_roles').values({ user_id: userId, role }).execute();
    },
  };
}
