import assert from 'node:assert/strict';
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
