import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';
import { jwtPayload, type Organization, organizationFixtures } from './organization-fixtures.ts';

/*
 * The refusals of organization tokens (docs/api.md §21, "Tokens"; docs/organizations.md) without a
 * browser: the hosted page's calls are made as its script makes them (code-flow.ts).
 */
const invalid = (code: string) => (err: oidc.ResponseBodyError) => {
  assert.equal(err.error, code, err.error_description);
  return true;
};

for (const dialect of DIALECTS) {
  describe(`organization token refusals (${dialect})`, () => {
    let f: CodeFlow;
    let acme: Organization;
    let config: oidc.Configuration;
    let fx: ReturnType<typeof organizationFixtures>;
    before(async () => {
      f = await startCodeFlow(dialect);
      fx = organizationFixtures(f.s);
      acme = await fx.organization('Acme');
      ({ config } = await f.client('Org notes', {
        first_party: true,
        scopes: ['openid', 'email', 'organizations', 'offline_access'],
      }));
    });
    after(async () => {
      await f?.close();
    });

    it('organization= on a refresh of a grant without the organizations scope: invalid_request, token kept', async () => {
      const p = await f.person();
      await fx.member(acme, p.id, ['member']);
      const tokens = await f.signIn(p, { scope: 'openid email offline_access' }, config);
      assert.equal(tokens.claims()?.org_id, undefined, 'no organization asked, none carried');
      assert.equal(tokens.claims()?.organizations, undefined, 'no organizations scope, no claim');
      await assert.rejects(
        oidc.refreshTokenGrant(config, String(tokens.refresh_token), { organization: acme.id }),
        invalid('invalid_request'),
      );
      const next = await oidc.refreshTokenGrant(config, String(tokens.refresh_token));
      assert.ok(next.access_token, 'the refused refresh consumed nothing');
    });

    it('prompt=none naming an organization the person is not a member of: access_denied, no code', async () => {
      const p = await f.person();
      await fx.member(acme, p.id, ['member']);
      const other = await fx.organization(`Other ${p.id.slice(-6)}`);
      const signedIn = await f.signIn(p, { scope: 'openid organizations', organization: acme.id }, config);
      assert.equal(signedIn.claims()?.org_id, acme.id);
      const { callback } = await f.authorize(
        p,
        { scope: 'openid organizations', organization: other.id, prompt: 'none' },
        config,
      );
      assert.equal(callback.searchParams.get('error'), 'access_denied');
      assert.equal(callback.searchParams.get('code'), null);
    });

    it('a malformed organization id: invalid_request on the authorization request', async () => {
      const p = await f.person();
      const { callback } = await f.authorize(
        p,
        { scope: 'openid organizations', organization: 'a b' },
        config,
      );
      assert.equal(callback.searchParams.get('error'), 'invalid_request');
    });

    it('a rbac flag that is not a boolean: 400 validation_failed, nothing stored', async () => {
      const before = (await f.s.admin('GET', '/api/v1/resources')).body.data as unknown[];
      const res = await f.s.admin('POST', '/api/v1/resources', {
        identifier: 'https://bad.example.test',
        name: 'Bad',
        rbac: 'yes',
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'validation_failed');
      assert.equal(
        ((await f.s.admin('GET', '/api/v1/resources')).body.data as unknown[]).length,
        before.length,
      );
    });

    it('with organizations off: organization= is invalid_request and own tokens carry no roles', async () => {
      const p = await f.person();
      await fx.globalRoles(p.id, ['member']);
      assert.deepEqual(jwtPayload(await f.login(p.email)).roles, ['member']);
      // docs/api.md §23: sso needs organizations, so it goes off first (else 409 module_in_use).
      const ssoOff = await f.s.admin('PUT', '/api/v1/admin/modules/sso', { enabled: false });
      assert.equal(ssoOff.status, 200, JSON.stringify(ssoOff.body));
      const off = await f.s.admin('PUT', '/api/v1/admin/modules/organizations', { enabled: false });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      try {
        assert.equal(jwtPayload(await f.login(p.email)).roles, undefined);
        const { callback } = await f.authorize(
          p,
          { scope: 'openid organizations', organization: acme.id },
          config,
        );
        assert.equal(callback.searchParams.get('error'), 'invalid_request');
      } finally {
        await f.s.admin('PUT', '/api/v1/admin/modules/organizations', { enabled: true });
        await f.s.admin('PUT', '/api/v1/admin/modules/sso', { enabled: true });
      }
    });
  });
}
