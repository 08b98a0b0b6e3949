import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { linkIn, nthMailTo, tokenOfLink } from '../recovery/helpers.ts';
import { freePort } from '../support/service-process.ts';
import { type CodeFlow, PASSWORD, startCodeFlow } from './code-flow.ts';

/*
 * docs/api.md §17, "Sessions are one": a sign-in into an application is a Gatehouse session, listed
 * with the client's name, and every way a session ends ends the grant: its refresh token is refused,
 * its tokens introspect as inactive, and the browser session no longer allows `prompt=none`.
 */

for (const dialect of DIALECTS) {
  describe(`oauth sessions are Gatehouse sessions (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    it('a sign-in into an application is a session in the user’s and the admin’s list, naming the client', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.equal(await f.active(String(tokens.refresh_token)), true);
      const own = await f.appSession(p.access);
      assert.deepEqual(own?.client, { client_id: f.app.client_id, name: 'Notes' });
      const listed = await f.appSession(
        await f.login(ADMIN_EMAIL, ADMIN_PASSWORD),
        `/api/v1/users/${p.id}/sessions`,
      );
      assert.equal(listed?.id, own?.id);
      // Silent sign-in works while nothing ended (the control for the tests below).
      const silent = await f.authorize(p, { prompt: 'none' });
      assert.ok(silent.callback.searchParams.get('code'));
    });

    it('a third-party client’s grant, made at the consent step, is a session too and ends with it', async () => {
      const other = await f.client('Wiki', { first_party: false });
      const p = await f.person();
      const tokens = await f.signIn(p, {}, other.config);
      const list = await f.api(p.access, 'GET', '/api/v1/sessions');
      const mine = (list.body.data as Array<{ id: string; client: { name: string } | null }>).find(
        (x) => x.client?.name === 'Wiki',
      );
      assert.ok(mine, 'listed with the client’s name');
      assert.equal((await f.api(p.access, 'DELETE', `/api/v1/sessions/${mine.id}`)).status, 204);
      assert.equal((await oidc.tokenIntrospection(other.config, tokens.access_token)).active, false);
      await assert.rejects(oidc.refreshTokenGrant(other.config, String(tokens.refresh_token)));
    });

    it('oauth-session-survives-client-deletion', async () => {
      const gone = await f.client('Gone', { first_party: true });
      const p = await f.person();
      await f.signIn(p, {}, gone.config);
      const listed = async () =>
        (
          (await f.api(p.access, 'GET', '/api/v1/sessions')).body.data as Array<{
            client: { client_id: string } | null;
          }>
        ).some((x) => x.client?.client_id === gone.app.client_id);
      assert.equal(await listed(), true);
      assert.equal((await f.s.admin('DELETE', `/api/v1/clients/${gone.app.client_id}`)).status, 204);
      assert.equal(await listed(), false);
    });

    it('oauth-grant-survives-global-logout', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.equal((await f.api(p.access, 'POST', '/api/v1/logout', { scope: 'global' })).status, 204);
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-the-user-revoking-its-session', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const own = await f.appSession(p.access);
      assert.equal((await f.api(p.access, 'DELETE', `/api/v1/sessions/${own?.id}`)).status, 204);
      await f.assertEnded(p, tokens);
      assert.equal(await f.appSession(p.access), undefined, 'the list no longer shows it');
    });

    it('oauth-grant-survives-admin-session-revocation', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const own = await f.appSession(p.access);
      const res = await f.s.admin('DELETE', `/api/v1/users/${p.id}/sessions/${own?.id}`);
      assert.equal(res.status, 204);
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-password-change', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const res = await f.api(p.access, 'PUT', '/api/v1/change-password', {
        current_password: PASSWORD,
        new_password: `${PASSWORD} changed`,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-password-reset', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const forgot = await fetch(`${f.s.origin}/api/v1/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: p.email }),
      });
      assert.equal(forgot.status, 202);
      const token = tokenOfLink(
        linkIn(await nthMailTo(f.smtp, p.email), `${f.s.origin}/account/reset-password/`),
      );
      const reset = await fetch(`${f.s.origin}/api/v1/password/reset/${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: `${PASSWORD} reset` }),
      });
      assert.equal(reset.status, 200, await reset.clone().text());
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-admin-password-set', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const res = await f.s.admin('PUT', `/api/v1/users/${p.id}`, { password: `${PASSWORD} by admin` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-mfa-reset', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      const res = await f.s.admin('DELETE', `/api/v1/users/${p.id}/mfa`);
      assert.equal(res.status, 204, JSON.stringify(res.body));
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-account-disable', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.equal((await f.s.admin('PUT', `/api/v1/users/${p.id}`, { status: 'disabled' })).status, 200);
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-account-delete', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.equal((await f.s.admin('DELETE', `/api/v1/users/${p.id}`)).status, 204);
      await f.assertEnded(p, tokens);
    });

    it('oauth-grant-survives-logout-of-its-browser-session', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.equal((await f.api(p.access, 'POST', '/api/v1/logout', {})).status, 204);
      await f.assertEnded(p, tokens);
    });

    it('app-session-ends-unaudited-with-its-browser-session: each ending has its session.revoke entry', async () => {
      const p = await f.person();
      await f.signIn(p);
      const app = await f.appSession(p.access);
      assert.ok(app, 'the grant is a session');
      assert.equal((await f.api(p.access, 'POST', '/api/v1/logout', {})).status, 204);
      const entries = await f.s.t.ctx.db
        .selectFrom('audit_log')
        .select(['actor_type', 'details'])
        .where('action', '=', 'session.revoke')
        .where('target_id', '=', app.id)
        .execute();
      assert.equal(entries.length, 1, 'one entry for the app session the logout ended');
      const details = JSON.parse(entries[0]?.details ?? '{}') as Record<string, unknown>;
      assert.equal(details.user_id, p.id);
      assert.equal(details.reason, 'logout');
      assert.equal(details.client_id, app.client?.client_id);
    });

    it('a grant with offline_access outlives a logout of its browser session; a global logout ends it', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p, { scope: 'openid email offline_access', prompt: 'consent' });
      assert.equal((await f.api(p.access, 'POST', '/api/v1/logout', {})).status, 204);
      const next = await oidc.refreshTokenGrant(f.config, String(tokens.refresh_token));
      assert.equal(await f.active(String(next.refresh_token)), true);
      p.access = await f.login(p.email);
      assert.ok(await f.appSession(p.access), 'still listed');
      assert.equal((await f.api(p.access, 'POST', '/api/v1/logout', { scope: 'global' })).status, 204);
      assert.equal(await f.active(String(next.refresh_token)), false);
    });

    it('oauth-grant-survives-connected-app-deletion', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.ok(await f.appSession(p.access));
      assert.equal((await f.api(p.access, 'DELETE', `/api/v1/grants/${f.app.client_id}`)).status, 204);
      assert.equal(await f.appSession(p.access), undefined, 'its session ended');
      assert.equal(await f.active(String(tokens.refresh_token)), false);
    });

    it('gatehouse-session-survives-rp-initiated-logout: "Yes, sign me out" ends the hosted sign-in too', async () => {
      const p = await f.person();
      const offline = await f.signIn(p, { scope: 'openid email offline_access', prompt: 'consent' });
      const tokens = await f.signIn(p);
      const page = await p.go(
        oidc.buildEndSessionUrl(f.config, { id_token_hint: String(tokens.id_token) }).href,
      );
      assert.equal(page.status, 200);
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())?.[1];
      assert.ok(xsrf, 'the confirmation page carries the library’s form');
      const done = await p.go('/oauth2/logout/confirm', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      });
      assert.ok([302, 303].includes(done.status), `redirected after the logout: ${done.status}`);
      // The Gatehouse session of the hosted sign-in ended: the next authorization asks for a sign-in.
      assert.equal((await f.api(p.access, 'GET', '/api/v1/sessions')).status, 401);
      await assert.rejects(f.authorize(p), /401/);
      await f.assertEnded(p, tokens);
      // docs/api.md §17: a grant with offline_access survives a plain logout.
      const next = await oidc.refreshTokenGrant(f.config, String(offline.refresh_token));
      assert.equal(await f.active(String(next.refresh_token)), true);
    });

    it('consent-page-lists-nothing-under-prompt-consent: the page names everything asked for again', async () => {
      // A web client: a third-party native one is asked for everything every time anyway.
      const web = 'https://wiki.example.test/cb';
      const wiki = await f.client('Consent Wiki', { application_type: 'web', redirect_uris: [web] });
      const p = await f.person();
      const first = await f.authorize(p, { redirect_uri: web }, wiki.config);
      assert.ok(first.callback.searchParams.get('code'), 'consented once');
      const url = oidc.buildAuthorizationUrl(wiki.config, {
        redirect_uri: web,
        scope: 'openid email',
        prompt: 'consent',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const asked = await p.go(url.href);
      const uid = /\/account\/authorize\/([^/?]+)$/.exec(asked.headers.get('location') ?? '')?.[1];
      assert.ok(uid, `to the consent step: ${asked.status} ${asked.headers.get('location')}`);
      const view = (await (await p.go(`/account/authorize/${uid}/details`)).json()) as {
        prompt: string;
        scopes: Array<{ name: string }>;
      };
      assert.equal(view.prompt, 'consent');
      assert.deepEqual(view.scopes.map((x) => x.name).sort(), ['email', 'openid']);
    });

    it('id-token-lacks-amr: the ID token says how the Gatehouse sign-in was made', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.deepEqual(tokens.claims()?.amr, ['pwd']);
    });

    it('a refresh token revoked by the client (RFC 7009) ends the grant’s session', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p);
      assert.ok(await f.appSession(p.access));
      await oidc.tokenRevocation(f.config, String(tokens.refresh_token));
      assert.equal(await f.appSession(p.access), undefined);
    });
  });
}

// docs/api.md §17: grants end "on every instance within section 16's bound". A grant's liveness is
// read from the database on every use (no cache), so the other instance sees the ending at once.
describe('an OAuth grant ends on every instance', {
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

  it('oauth-grant-survives-global-logout-on-another-instance', async () => {
    const p = await f.person();
    const tokens = await f.signIn(p);
    assert.equal(await f.active(String(tokens.refresh_token)), true);
    const out = await fetch(`${bOrigin}/api/v1/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'global' }),
    });
    assert.equal(out.status, 204);
    await f.assertEnded(p, tokens);
  });
});
