import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type HookReceiver, hookEnv, startHookReceiver } from '../hook/receiver.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';
import { jwtPayload, organizationFixtures } from './organization-fixtures.ts';

/*
 * docs/api.md §21: the claims hook is told the organization of an organization token,
 * `{"id","slug","roles"}` (the user's roles there), and sees `org_id` and `roles` among the claims
 * about to be signed, on the code grant and on a refresh that switches organization. A real
 * receiver verifying every call with `standardwebhooks`, openid-client as the relying party.
 */
const API = 'https://ledger.example.test';

for (const dialect of DIALECTS) {
  describe(`claims hook told the organization (${dialect})`, () => {
    let hook: HookReceiver;
    let f: CodeFlow;
    before(async () => {
      hook = await startHookReceiver();
      f = await startCodeFlow(dialect, hookEnv(hook));
    });
    after(async () => {
      await f?.close();
      await hook?.close();
    });

    it('code grant and a switching refresh: organization and org_id/roles in the call', async () => {
      const fx = organizationFixtures(f.s);
      await fx.role('bookkeeper', ['ledger:read']);
      const acme = await fx.organization('Acme');
      const beta = await fx.organization('Beta');
      const made = await f.s.admin('POST', '/api/v1/resources', {
        identifier: API,
        name: 'Ledger',
        scopes: [{ name: 'ledger:read', description: 'Read the ledger' }],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const { config } = await f.client('Ledger app', {
        first_party: true,
        scopes: ['openid', 'organizations', 'offline_access', 'ledger:read'],
        resources: [API],
      });
      const p = await f.person();
      await fx.member(acme, p.id, ['bookkeeper']);
      await fx.member(beta, p.id, ['member']);
      hook.decide = () => ({ plan: 'pro' });
      const from = hook.calls.length;
      const tokens = await f.signIn(
        p,
        { scope: 'openid organizations offline_access ledger:read', resource: API, organization: acme.id },
        config,
      );
      const at = jwtPayload(tokens.access_token);
      assert.equal(at.org_id, acme.id);
      assert.equal(at.plan, 'pro');
      const call = hook.calls.slice(from).find((c) => c.body.data.client_id !== null);
      assert.ok(call?.verified, 'the authorization server called the hook, signed');
      assert.deepEqual(call.body.data.organization, { id: acme.id, slug: 'acme', roles: ['bookkeeper'] });
      assert.equal(call.body.data.claims.org_id, acme.id);
      assert.deepEqual(call.body.data.claims.roles, ['bookkeeper']);

      const next = hook.calls.length;
      const switched = await oidc.refreshTokenGrant(config, String(tokens.refresh_token), {
        organization: beta.id,
        resource: API,
      });
      assert.equal(jwtPayload(switched.access_token).org_id, beta.id);
      const refreshCall = hook.calls.slice(next).find((c) => c.body.data.client_id !== null);
      assert.deepEqual(refreshCall?.body.data.organization, { id: beta.id, slug: 'beta', roles: ['member'] });
      assert.equal(refreshCall?.body.data.claims.org_id, beta.id);
    });
  });
}
