import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { createSamlIdp, type SamlIdp } from '../support/saml-idp.ts';

const COOKIE = 'gatehouse_saml_flow';

function cookieOf(res: LightMyRequestResponse): string {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${COOKIE}=`)) ?? '';
  return line.split(';')[0]?.split('=')[1] ?? '';
}

for (const dialect of DIALECTS) {
  describe(`sso: provisioning into the connection's organization, replay across instances [${dialect}]`, () => {
    let t: TestApp;
    let other: TestApp | undefined;
    let idp: SamlIdp;
    let admin: { authorization: string };
    let orgId: string;
    let spMetadata: string;

    before(async () => {
      idp = createSamlIdp('https://idp.globex.test/saml');
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      admin = await authHeaders(t, await firstAdmin(t));
      const org = await t.app.inject({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: admin,
        payload: { name: 'Globex', domains: ['globex.example'], default_roles: ['member'] },
      });
      assert.equal(org.statusCode, 201, org.body);
      orgId = json<{ id: string }>(org).id;
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/providers',
        headers: admin,
        payload: {
          name: 'globex',
          kind: 'saml',
          organization_id: orgId,
          domains: ['globex.example'],
          idp_metadata_xml: idp.metadataXml,
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      spMetadata = (await t.app.inject({ url: '/saml/globex/metadata' })).body;
    });
    after(async () => {
      await other?.close();
      await t?.destroy();
    });

    async function post(app: TestApp, SAMLResponse: string, cookie?: string, RelayState?: string) {
      return app.app.inject({
        method: 'POST',
        url: '/saml/globex/acs',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(cookie ? { cookie: `${COOKIE}=${cookie}` } : {}),
        },
        payload: new URLSearchParams({ SAMLResponse, ...(RelayState ? { RelayState } : {}) }).toString(),
      });
    }

    it('a person the connection creates joins its organization with default_roles, audited', async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/globex/start' });
      const answer = await idp.respond(spMetadata, {
        location: String(start.headers.location),
        user: { nameId: 'wile@globex.example' },
      });
      const res = await post(t, answer.SAMLResponse, cookieOf(start), answer.RelayState);
      assert.equal(res.statusCode, 200, `${res.statusCode} ${res.headers.location}`);
      const user = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'wile@globex.example')
        .executeTakeFirstOrThrow();
      const roles = await t.ctx.db
        .selectFrom('organization_member_roles')
        .select('role')
        .where('organization_id', '=', orgId)
        .where('user_id', '=', user.id)
        .execute();
      assert.deepEqual(
        roles.map((r) => r.role),
        ['member'],
      );
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'organization.member.added')
        .where('target_id', '=', orgId)
        .executeTakeFirstOrThrow();
      assert.match(entry.details, /"via":"sso"/);
    });

    it('refuses an assertion replayed on another instance sharing the database (IdP-initiated)', async () => {
      const put = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/idp/providers/globex',
        headers: admin,
        payload: { saml: { allow_idp_initiated: true } },
      });
      assert.equal(put.statusCode, 200, put.body);
      const answer = await idp.respond(spMetadata, {
        location: null,
        user: { nameId: 'road@globex.example' },
      });
      const first = await post(t, answer.SAMLResponse);
      assert.equal(first.statusCode, 200, `${first.statusCode} ${first.headers.location}`);
      other = await t.restart();
      const again = await post(other, answer.SAMLResponse);
      assert.equal(again.statusCode, 302);
      assert.equal(again.headers.location, '/account/sign-in?error=idp_token_invalid');
    });
  });
}
