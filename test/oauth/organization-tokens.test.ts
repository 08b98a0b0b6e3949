import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, skipWithoutChromium, totp } from '../browser/harness.ts';
import { authorize, authRequest, CALLBACK, enrolTotp, exchange, signInAs } from '../browser/oauth-support.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { jwtPayload, type Organization, organizationFixtures } from './organization-fixtures.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * Organization tokens (docs/api.md §21, "Tokens"; docs/organizations.md) with a real relying party
 * and a real browser on each dialect: openid-client builds each authorization request and exchanges,
 * refreshes and introspects; Chromium signs in, consents and is refused on the hosted pages.
 * Organizations, roles and members are set up through the admin API.
 */

const PASSWORD = 'a long and unguessable passphrase 7';
const API = 'https://invoices.example.test';
const ORG_SCOPES = 'openid email organizations offline_access';

let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

const refused = (code: string) => (err: oidc.ResponseBodyError) => {
  assert.equal(err.error, code, err.error_description);
  return true;
};

for (const dialect of DIALECTS) {
  describe(`organization tokens in Chromium with openid-client (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let s: OauthStack;
    let books: oidc.Configuration;
    let acme: Organization;
    let beta: Organization;
    let secure: Organization;
    let other: Organization;
    let people = 0;
    let f: ReturnType<typeof organizationFixtures>;

    const person = async () => {
      people += 1;
      const email = `member${people}@example.test`;
      const made = await s.admin('POST', '/api/v1/users', {
        email,
        password: PASSWORD,
        name: `Member ${people}`,
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return { id: String(made.body.id), email };
    };

    /** Signs in on the hosted page and allows what the consent page lists (checking it lists `shows`). */
    const signInAndAllow =
      (email: string, shows: string[] = [], hides: string[] = []) =>
      async (page: Page) => {
        await signInAs(email, PASSWORD)(page);
        await page.getByRole('heading', { name: /Books asks for access/ }).waitFor();
        for (const text of shows) await page.getByText(text).waitFor();
        for (const text of hides)
          assert.equal(await page.getByText(text).count(), 0, `${text} is not listed`);
        await page.getByRole('button', { name: 'Allow' }).click();
      };

    before(async () => {
      browser ??= await launchBrowser();
      s = await startOauthApp(dialect);
      f = organizationFixtures(s);
      await f.role('reader', ['invoices:read']);
      await f.role('writer', ['invoices:read', 'invoices:write']);
      await f.role('auditor', []);
      const resource = await s.admin('POST', '/api/v1/resources', {
        identifier: API,
        name: 'Invoices',
        scopes: [
          { name: 'invoices:read', description: 'Read your invoices' },
          { name: 'invoices:write', description: 'Change your invoices' },
        ],
        rbac: true,
      });
      assert.equal(resource.status, 201, JSON.stringify(resource.body));
      assert.equal(resource.body.rbac, true);
      const client = await s.admin('POST', '/api/v1/clients', {
        name: 'Books',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'email', 'organizations', 'offline_access', 'invoices:read', 'invoices:write'],
        resources: [API],
      });
      assert.equal(client.status, 201, JSON.stringify(client.body));
      const registered = client.body as { client_id: string; client_secret: string };
      books = await oidc.discovery(
        new URL(s.origin),
        registered.client_id,
        registered.client_secret,
        undefined,
        {
          execute: [oidc.allowInsecureRequests],
        },
      );
      acme = await f.organization('Acme');
      beta = await f.organization('Beta');
      secure = await f.organization('Secure', { require_mfa: true });
      other = await f.organization('Other');
    });
    after(async () => {
      await s?.close();
    });

    it('signs in to an organization: org_id in the ID token and the access token, organizations in userinfo, not org_id', async () => {
      const ada = await person();
      await f.member(acme, ada.id, ['reader']);
      await f.member(beta, ada.id, ['writer']);
      const context = await browser!.newContext();
      const r = await authRequest(books, { scope: ORG_SCOPES, organization: acme.id, prompt: 'consent' });
      const back = await authorize(
        context,
        r.url,
        signInAndAllow(ada.email, ['See the organizations you belong to and your roles there']),
      );
      const tokens = await exchange(books, back, r);
      const claims = tokens.claims();
      assert.equal(claims?.org_id, acme.id);
      const memberships = claims?.organizations as Array<{ id: string; slug: string; roles: string[] }>;
      assert.deepEqual(
        memberships.map((m) => [m.id, m.slug, m.roles]).sort(),
        [
          [acme.id, 'acme', ['reader']],
          [beta.id, 'beta', ['writer']],
        ].sort(),
      );
      const introspected = await oidc.tokenIntrospection(books, tokens.access_token);
      assert.equal(introspected.active, true);
      assert.equal(
        introspected.org_id,
        acme.id,
        'introspection of the opaque access token names the organization',
      );
      const info = await oidc.fetchUserInfo(books, tokens.access_token, String(claims?.sub));
      assert.equal(info.org_id, undefined, 'userinfo does not carry org_id');
      assert.equal((info.organizations as unknown[]).length, 2);

      // Switching organization by refresh, without a new sign-in.
      const switched = await oidc.refreshTokenGrant(books, String(tokens.refresh_token), {
        organization: beta.id,
      });
      assert.equal(switched.claims()?.org_id, beta.id);
      assert.equal((await oidc.tokenIntrospection(books, switched.access_token)).org_id, beta.id);
      // A non-member organization: invalid_target, and the refused refresh consumed nothing.
      await assert.rejects(
        oidc.refreshTokenGrant(books, String(switched.refresh_token), { organization: other.id }),
        refused('invalid_target'),
      );
      // Without organization= the grant keeps its current one (beta), with the same token.
      const kept = await oidc.refreshTokenGrant(books, String(switched.refresh_token));
      assert.equal(kept.claims()?.org_id, beta.id);
      assert.equal((await oidc.tokenIntrospection(books, kept.access_token)).org_id, beta.id);
      await context.close();
    });

    it('an rbac API grants only the scopes the roles permit, the consent page lists only those, and roles are in the token', async () => {
      const bob = await person();
      await f.globalRoles(bob.id, ['auditor']);
      await f.member(acme, bob.id, ['reader']);
      await f.member(beta, bob.id, ['writer']);
      const context = await browser!.newContext();
      const r = await authRequest(books, {
        scope: 'openid organizations offline_access invoices:read invoices:write',
        resource: API,
        organization: acme.id,
        prompt: 'consent',
      });
      const back = await authorize(
        context,
        r.url,
        signInAndAllow(bob.email, ['Read your invoices'], ['Change your invoices']),
      );
      const tokens = await exchange(books, back, r);
      const at = jwtPayload(tokens.access_token);
      assert.equal(at.aud, API);
      assert.equal(at.org_id, acme.id);
      assert.equal(
        at.scope,
        'invoices:read',
        'invoices:write was asked for but is not permitted (RFC 6749 §3.3)',
      );
      assert.deepEqual([...(at.roles as string[])].sort(), ['auditor', 'reader']);
      // Switching to beta, where bob is a writer: the grant's consent holds invoices:read only.
      const inBeta = await oidc.refreshTokenGrant(books, String(tokens.refresh_token), {
        organization: beta.id,
        resource: API,
      });
      const betaAt = jwtPayload(inBeta.access_token);
      assert.equal(betaAt.org_id, beta.id);
      assert.deepEqual([...(betaAt.roles as string[])].sort(), ['auditor', 'writer']);

      // Client credentials keep the client's registered scopes (no user, no roles).
      const batch = await s.admin('POST', '/api/v1/clients', {
        name: 'Batch',
        grant_types: ['client_credentials'],
        scopes: ['invoices:read', 'invoices:write'],
        resources: [API],
      });
      const job = batch.body as { client_id: string; client_secret: string };
      const jobRp = await oidc.discovery(new URL(s.origin), job.client_id, job.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      const cc = await oidc.clientCredentialsGrant(jobRp, {
        scope: 'invoices:read invoices:write',
        resource: API,
      });
      const ccAt = jwtPayload(cc.access_token);
      assert.equal(ccAt.scope, 'invoices:read invoices:write');
      assert.equal(ccAt.roles, undefined);
      assert.equal(ccAt.org_id, undefined);
      await context.close();
    });

    it('refuses an organization the person is not a member of on the hosted page: Back to Books answers access_denied', async () => {
      const cy = await person();
      await f.member(acme, cy.id, ['reader']);
      const context = await browser!.newContext();
      const r = await authRequest(books, { scope: ORG_SCOPES, organization: other.id, prompt: 'consent' });
      const back = await authorize(context, r.url, async (page) => {
        await signInAs(cy.email, PASSWORD)(page);
        await page
          .getByRole('heading', { name: 'Your account is not a member of that organization' })
          .waitFor();
        await page.getByRole('button', { name: 'Back to Books' }).click();
      });
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), r.state);
      // organization= without the organizations scope: invalid_request, before any page.
      const bare = await authRequest(books, { scope: 'openid email', organization: acme.id });
      const bareBack = await authorize(context, bare.url);
      assert.equal(bareBack.searchParams.get('error'), 'invalid_request');
      await context.close();
    });

    it('require_mfa: a second factor in the sign-in, else the page asks for one; a refresh naming it without one is invalid_target', async () => {
      const dee = await person();
      await f.member(acme, dee.id, ['reader']);
      await f.member(secure, dee.id, ['reader']);
      const context = await browser!.newContext();
      // A grant of acme signed in with the password alone cannot switch into secure.
      const r = await authRequest(books, { scope: ORG_SCOPES, organization: acme.id, prompt: 'consent' });
      const tokens = await exchange(books, await authorize(context, r.url, signInAndAllow(dee.email)), r);
      await assert.rejects(
        oidc.refreshTokenGrant(books, String(tokens.refresh_token), { organization: secure.id }),
        refused('invalid_target'),
      );
      // An account without a second factor is asked to set one up.
      const page = await context.newPage();
      const asked = await authRequest(books, {
        scope: ORG_SCOPES,
        organization: secure.id,
        prompt: 'consent',
      });
      await page.goto(asked.url.href);
      await page.getByText('This organization requires a second factor').waitFor();
      await page.getByRole('link', { name: 'Set up a second factor on your account page' }).waitFor();
      await context.close();

      // With TOTP, the sign-in asks for the code and the token is the organization's.
      const secret = await enrolTotp({ origin: s.origin } as never, dee.email, PASSWORD);
      const second = await browser!.newContext();
      const again = await authRequest(books, {
        scope: ORG_SCOPES,
        organization: secure.id,
        prompt: 'consent',
      });
      const back = await authorize(second, again.url, async (p) => {
        await signInAs(dee.email, PASSWORD)(p);
        await p.getByRole('heading', { name: 'Two-step verification' }).waitFor();
        await p.getByLabel('Code from your authenticator app').fill(totp(secret, Date.now() + 30_000));
        await p.getByRole('button', { name: 'Verify' }).click();
        await p.getByRole('heading', { name: /Books asks for access/ }).waitFor();
        await p.getByRole('button', { name: 'Allow' }).click();
      });
      const mfaTokens = await exchange(books, back, again);
      assert.equal(mfaTokens.claims()?.org_id, secure.id);
      assert.ok((mfaTokens.claims()?.amr as string[] | undefined)?.includes('otp'));
      await second.close();
    });

    it("Gatehouse's own access tokens carry the global roles, and no roles claim when there are none", async () => {
      const eve = await person();
      const login = async () => {
        const res = await fetch(`${s.origin}/api/v1/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: eve.email, password: PASSWORD }),
        });
        assert.equal(res.status, 200);
        return (await res.json()) as { access_token: string; refresh_token: string };
      };
      assert.equal(jwtPayload((await login()).access_token).roles, undefined);
      await f.globalRoles(eve.id, ['auditor']);
      await f.member(acme, eve.id, ['writer']);
      const signed = await login();
      assert.deepEqual(jwtPayload(signed.access_token).roles, ['auditor'], 'global roles only');
      const refreshed = await fetch(`${s.origin}/api/v1/refresh-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: signed.refresh_token }),
      });
      assert.equal(refreshed.status, 200);
      const next = (await refreshed.json()) as { access_token: string };
      assert.deepEqual(jwtPayload(next.access_token).roles, ['auditor']);
    });
  });
}
