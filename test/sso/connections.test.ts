import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { createSamlIdp, FOREIGN_CERT, IDP_CERT, type SamlIdp } from '../support/saml-idp.ts';

const code = (res: LightMyRequestResponse) => json<{ code: string }>(res).code;

for (const dialect of DIALECTS) {
  describe(`sso: SAML connections in the admin API, metadata documents and discovery [${dialect}]`, () => {
    let t: TestApp;
    let idp: SamlIdp;
    let admin: { authorization: string };
    let orgId: string;

    const create = (payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/api/v1/idp/providers', headers: admin, payload });
    const saml = (extra: Record<string, unknown> = {}) => ({
      idp_entity_id: 'https://idp.example.test/saml',
      idp_sso_url: 'https://idp.example.test/sso',
      idp_certificates: [IDP_CERT],
      ...extra,
    });
    const rows = async () => (await t.ctx.db.selectFrom('idp_providers').select('name').execute()).length;

    before(async () => {
      idp = createSamlIdp();
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      admin = await authHeaders(t, await firstAdmin(t));
      // An organization holding two domains (written directly: its admin API is another module's).
      orgId = uuidv7();
      const now = Date.now();
      await t.ctx.db
        .insertInto('organizations')
        .values({ id: orgId, name: 'Globex', slug: 'globex', created_at: now, updated_at: now } as never)
        .execute();
      await t.ctx.db
        .insertInto('organization_domains')
        .values([
          { domain: 'globex.example', organization_id: orgId },
          { domain: 'globex.test', organization_id: orgId },
        ])
        .execute();
    });
    after(async () => {
      await t?.destroy();
    });

    it('creates a connection from fields, owned by an organization, within its domains', async () => {
      const res = await create({
        name: 'globex',
        display_name: 'Globex',
        kind: 'saml',
        organization_id: orgId,
        domains: ['Globex.Example'],
        saml: saml({ idp_certificates: [IDP_CERT, FOREIGN_CERT] }),
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = json<Record<string, unknown>>(res);
      assert.equal(body.organization_id, orgId);
      assert.deepEqual(body.domains, ['globex.example']);
      assert.equal((body.saml as { idp_certificates: string[] }).idp_certificates.length, 2);
      assert.equal((body.saml as { attribute_mapping: unknown }).attribute_mapping, null);
    });

    it('refuses domains outside the organization (400) and a domain of another enabled connection (409)', async () => {
      const before = await rows();
      const outside = await create({
        name: 'x1',
        kind: 'saml',
        organization_id: orgId,
        domains: ['globex.example', 'initech.example'],
        saml: saml(),
      });
      assert.equal(outside.statusCode, 400, outside.body);
      assert.equal(code(outside), 'validation_failed');
      const unknownOrg = await create({
        name: 'x2',
        kind: 'saml',
        organization_id: uuidv7(),
        domains: [],
        saml: saml(),
      });
      assert.equal(unknownOrg.statusCode, 400);
      const taken = await create({ name: 'x3', kind: 'saml', domains: ['globex.example'], saml: saml() });
      assert.equal(taken.statusCode, 409, taken.body);
      assert.equal(code(taken), 'provider_exists');
      // A disabled connection claims nothing: it may hold the domain, and discovery skips it.
      const disabled = await create({
        name: 'x4',
        kind: 'saml',
        enabled: false,
        domains: ['globex.example'],
        saml: saml(),
      });
      assert.equal(disabled.statusCode, 201, disabled.body);
      const enable = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/idp/providers/x4',
        headers: admin,
        payload: { enabled: true },
      });
      assert.equal(enable.statusCode, 409);
      assert.equal(code(enable), 'provider_exists');
      assert.equal(await rows(), before + 1);
    });

    it('refuses bad settings with 400 validation_failed and stores nothing', async () => {
      const before = await rows();
      const cases: Array<[string, Record<string, unknown>]> = [
        ['no certificate', { saml: saml({ idp_certificates: undefined }) }],
        [
          'a certificate that does not parse',
          {
            saml: saml({
              idp_certificates: ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'],
            }),
          },
        ],
        ['an http SSO URL off loopback', { saml: saml({ idp_sso_url: 'http://idp.example.test/sso' }) }],
        ['a relative SSO URL', { saml: saml({ idp_sso_url: '/sso' }) }],
        ['an OIDC field', { saml: saml(), client_id: 'abc' }],
        ['an issuer', { saml: saml(), issuer: 'https://idp.example.test' }],
        ['no saml block', {}],
        [
          'metadata with entity fields beside it',
          { idp_metadata_xml: idp.metadataXml, saml: { idp_entity_id: 'x' } },
        ],
        [
          'a saml block on an oidc provider',
          { kind: 'oidc', issuer: 'https://op.example.test', client_id: 'c', saml: saml() },
        ],
        ['a domain that is not one', { saml: saml(), domains: ['not a domain'] }],
      ];
      for (const [what, body] of cases) {
        const res = await create({ name: 'bad', kind: 'saml', ...body });
        assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
        assert.equal(code(res), 'validation_failed', what);
      }
      assert.equal(await rows(), before);
    });

    it('reads IdP metadata with a maintained XML parser and refuses bad documents', async () => {
      const ok = await create({
        name: 'meta',
        kind: 'saml',
        idp_metadata_xml: idp.metadataXml,
        domains: ['meta.example'],
      });
      assert.equal(ok.statusCode, 201, ok.body);
      const read = json<{ saml: { idp_entity_id: string; idp_sso_url: string; idp_certificates: string[] } }>(
        ok,
      ).saml;
      assert.equal(read.idp_entity_id, idp.entityId);
      assert.equal(read.idp_sso_url, idp.ssoUrl);
      assert.equal(read.idp_certificates.length, 1);
      assert.ok(!ok.body.includes('IDPSSODescriptor'));

      const noRedirect = idp.metadataXml.replaceAll('bindings:HTTP-Redirect', 'bindings:HTTP-POST');
      const noKey = idp.metadataXml.replace(/<(\w+:)?KeyDescriptor[\s\S]*?<\/(\w+:)?KeyDescriptor>/g, '');
      const encryptionOnly = idp.metadataXml.replace(
        /<((\w+:)?KeyDescriptor)( use="signing")?/g,
        '<$1 use="encryption"',
      );
      const badCert = idp.metadataXml.replace(/(<(\w+:)?X509Certificate>)[^<]+/, '$1bm90IGEgY2VydA==');
      const bad: Array<[string, string]> = [
        ['not XML', 'this is not xml'],
        ['unclosed', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x">'],
        [
          'a DTD',
          `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idp.metadataXml.replace(/^<\?xml[^>]*>/, '')}`,
        ],
        ['no EntityDescriptor', '<x/>'],
        ['no HTTP-Redirect SingleSignOnService', noRedirect],
        ['no signing key', noKey],
        ['only an encryption key', encryptionOnly],
        ['a certificate that does not parse', badCert],
      ];
      for (const [what, xml] of bad) {
        const res = await create({ name: 'meta2', kind: 'saml', idp_metadata_xml: xml });
        assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
        assert.equal(code(res), 'validation_failed', what);
      }
    });

    it('discovers the enabled connection of an address by its exact domain', async () => {
      const hit = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/discover',
        payload: { email: 'Wile@GLOBEX.example' },
      });
      assert.equal(hit.statusCode, 200, hit.body);
      assert.deepEqual(json(hit), {
        provider: {
          name: 'globex',
          display_name: 'Globex',
          start_url: `${PUBLIC_URL}/api/v1/idp/globex/start`,
        },
      });
      for (const email of ['a@eu.globex.example', 'a@globex.test', 'a@nowhere.example']) {
        const miss = await t.app.inject({ method: 'POST', url: '/api/v1/idp/discover', payload: { email } });
        assert.deepEqual(json(miss), { provider: null }, email);
      }
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/idp/providers/globex',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const disabled = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/discover',
        payload: { email: 'wile@globex.example' },
      });
      assert.deepEqual(json(disabled), { provider: null });
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/discover',
        payload: { email: 'no-at-sign' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(code(bad), 'validation_failed');
    });

    it('limits discovery to 20 a minute per client address (429 with Retry-After)', async () => {
      const ask = (ip: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/idp/discover',
          remoteAddress: ip,
          payload: { email: 'a@b.example' },
        });
      for (let i = 0; i < 20; i++) assert.equal((await ask('203.0.113.9')).statusCode, 200);
      const over = await ask('203.0.113.9');
      assert.equal(over.statusCode, 429);
      assert.equal(code(over), 'rate_limited');
      assert.ok(over.headers['retry-after']);
      assert.equal((await ask('198.51.100.7')).statusCode, 200);
    });

    it('serves nothing under /saml/ for a provider of another kind, and 404s while sso is off', async () => {
      const oidc = await create({
        name: 'op',
        kind: 'oidc',
        issuer: 'https://op.example.test',
        client_id: 'c',
      });
      assert.equal(oidc.statusCode, 201, oidc.body);
      assert.equal((await t.app.inject({ url: '/saml/op/metadata' })).statusCode, 404);
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/sso',
        headers: admin,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      try {
        assert.equal((await t.app.inject({ url: '/saml/meta/metadata' })).statusCode, 404);
        assert.equal((await t.app.inject({ url: '/api/v1/idp/meta/start' })).statusCode, 404);
        const discover = await t.app.inject({
          method: 'POST',
          url: '/api/v1/idp/discover',
          payload: { email: 'a@b.example' },
        });
        assert.equal(discover.statusCode, 404);
      } finally {
        await t.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/sso',
          headers: admin,
          payload: { enabled: true },
        });
      }
    });
    it('keeps sso and the modules it needs together: 409 module_unavailable / module_in_use', async () => {
      const put = (name: string, enabled: boolean) =>
        t.app.inject({
          method: 'PUT',
          url: `/api/v1/admin/modules/${name}`,
          headers: admin,
          payload: { enabled },
        });
      for (const needed of ['providers', 'organizations']) {
        const refused = await put(needed, false);
        assert.equal(refused.statusCode, 409, refused.body);
        assert.equal(code(refused), 'module_in_use');
      }
      assert.equal((await put('sso', false)).statusCode, 200);
      try {
        assert.equal((await put('organizations', false)).statusCode, 200);
        const unavailable = await put('sso', true);
        assert.equal(unavailable.statusCode, 409, unavailable.body);
        assert.equal(code(unavailable), 'module_unavailable');
        assert.match(json<{ detail: string }>(unavailable).detail, /organizations/);
        assert.equal((await put('organizations', true)).statusCode, 200);
        assert.equal((await put('sso', true)).statusCode, 200);
        // A forced switch-off (docs/api.md §16's override) takes sso along: never on without its needs.
        const forced = await t.app.inject({
          method: 'PUT',
          url: '/api/v1/admin/modules/organizations',
          headers: admin,
          payload: { enabled: false, force: true },
        });
        assert.equal(forced.statusCode, 200, forced.body);
        assert.equal(t.ctx.modules.isEnabled('sso'), false);
        assert.equal(t.ctx.modules.isEnabled('organizations'), false);
      } finally {
        assert.equal((await put('organizations', true)).statusCode, 200);
        assert.equal((await put('sso', true)).statusCode, 200);
      }
    });
  });
}
