import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import type { TestDialect } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

export const SCIM_JSON = 'application/scim+json';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimOrg {
  id: string;
  token: string;
}

/** A `full` app with the first admin's headers. */
export async function scimApp(dialect: TestDialect) {
  const t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
  const admin = await authHeaders(t, await firstAdmin(t));
  return { t, admin };
}

/** An organization with domains and a SCIM token. */
export async function scimOrg(
  t: TestApp,
  admin: { authorization: string },
  body: Record<string, unknown>,
): Promise<ScimOrg> {
  const org = await t.app.inject({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: admin,
    payload: body,
  });
  assert.equal(org.statusCode, 201, org.body);
  const id = json<{ id: string }>(org).id;
  const token = await t.app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${id}/scim-token`,
    headers: admin,
  });
  assert.equal(token.statusCode, 201, token.body);
  return { id, token: json<{ token: string }>(token).token };
}

/** A SCIM request with the organization's token, its body sent as application/scim+json. */
export function scim(
  t: TestApp,
  org: Pick<ScimOrg, 'token'>,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return t.app.inject({
    method,
    url: `/scim/v2${url}`,
    headers: {
      authorization: `Bearer ${org.token}`,
      ...(payload !== undefined && { 'content-type': SCIM_JSON }),
    },
    ...(payload !== undefined && { payload: JSON.stringify(payload) }),
  });
}

/** Asserts a SCIM error answer (RFC 7644 §3.12) and returns it. */
export function scimError(res: LightMyRequestResponse, status: number, scimType?: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
  const body = json<{ schemas: string[]; status: string; scimType?: string; detail: string }>(res);
  assert.deepEqual(body.schemas, [ERROR_SCHEMA]);
  assert.equal(body.status, String(status));
  assert.equal(body.scimType, scimType);
  assert.doesNotMatch(res.body, /select |insert |at .*\.ts:\d+|gscim_/i);
  return body;
}

/** Okta's create-user request (Okta SCIM 2.0 protocol reference, "Create the user"). */
export function oktaUser(userName: string, externalId = '00ujl29u0le5T6Aj10h7') {
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId,
    groups: [],
    password: '1mz050nq',
    active: true,
  };
}

/** Entra ID's create-user request (Microsoft, "Develop a sample SCIM endpoint", user operations). */
export function entraUser(userName: string, externalId = '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef') {
  return {
    schemas: [USER_SCHEMA, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId,
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: userName }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  };
}

export const patchOp = (...Operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations });
