import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { TestApp } from '../helpers/app.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort } from '../support/service-process.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';
import { organizationFixtures } from './organization-fixtures.ts';

/*
 * docs/api.md §21 with §16's bound: a membership removed on one instance stops that organization's
 * tokens on the other. Memberships are read from the database on every refresh (no cache), so the
 * bound holds at once: the test removes on B and the very first refresh on A after the removal's
 * answer is refused, with no retry, for several members.
 */
describe('a membership removed on one instance stops organization tokens on the other', {
  skip: !DIALECTS.includes('postgres') && 'PostgreSQL only (TEST_DATABASE_URL)',
}, () => {
  let f: CodeFlow;
  let b: TestApp;
  let bOrigin: string;
  before(async () => {
    f = await startCodeFlow('postgres');
    b = await f.s.t.restart();
    const port = await freePort();
    await b.app.listen({ port, host: 'localhost' });
    bOrigin = `http://localhost:${port}`;
  });
  after(async () => {
    await b?.close();
    await f?.close();
  });

  it('organization-membership-removed-on-another-instance', async () => {
    // The admin API of instance B.
    const login = await fetch(`${bOrigin}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    const bToken = ((await login.json()) as { access_token: string }).access_token;
    const onB = organizationFixtures({ admin: (method, path, body) => f.api(bToken, method, path, body) });
    const onA = organizationFixtures(f.s);
    await onA.role('reader', ['invoices:read']);
    const acme = await onA.organization('Acme');
    const beta = await onA.organization('Beta');
    const { config } = await f.client('Org notes', {
      first_party: true,
      scopes: ['openid', 'email', 'organizations', 'offline_access'],
    });
    for (let round = 0; round < 5; round += 1) {
      const p = await f.person();
      await onA.member(acme, p.id, ['reader']);
      await onA.member(beta, p.id, ['reader']);
      const tokens = await f.signIn(
        p,
        { scope: 'openid organizations offline_access', organization: acme.id },
        config,
      );
      assert.equal(tokens.claims()?.org_id, acme.id);
      const refreshed = await oidc.refreshTokenGrant(config, String(tokens.refresh_token));
      assert.equal(refreshed.claims()?.org_id, acme.id, 'the grant keeps its organization');
      await onB.removeMember(acme, p.id);
      // Keeping the organization: invalid_grant (the membership ended), and the token is not consumed.
      await assert.rejects(
        oidc.refreshTokenGrant(config, String(refreshed.refresh_token)),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'invalid_grant');
          return true;
        },
      );
      // Naming it: invalid_target.
      await assert.rejects(
        oidc.refreshTokenGrant(config, String(refreshed.refresh_token), { organization: acme.id }),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'invalid_target');
          return true;
        },
      );
      // The same token still switches to an organization the person belongs to.
      const moved = await oidc.refreshTokenGrant(config, String(refreshed.refresh_token), {
        organization: beta.id,
      });
      assert.equal(moved.claims()?.org_id, beta.id);
    }
  });
});
