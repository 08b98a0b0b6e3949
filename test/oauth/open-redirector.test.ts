import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/databases.ts';
import { cookieBrowser } from '../support/cookie-browser.ts';
import { type OauthStack, startOauthApp } from './support.ts';

/*
 * open-registration-open-redirector: with OAUTH_DYNAMIC_REGISTRATION=open anyone registers a
 * client with any https redirect URI, and the library then sent a browser there without a click:
 * every error answer of /oauth2/authorize (a bad scope, prompt=none without a session) and a
 * logout without a browser session (the page submits itself, then redirects to the registered
 * post_logout_redirect_uri). For a `registered: true` client such an error now renders
 * Gatehouse's error page, and logout always shows the confirmation page (docs/oauth.md, "Open
 * registration"; RFC 9700 §4.11.2). Clients an admin created keep the library's redirects.
 */

const EVIL = 'https://evil.example.test';
const CALLBACK = `${EVIL}/cb`;
const BYE = `${EVIL}/bye`;
// RFC 7636 appendix B's challenge: any valid S256 value will do, the code is never exchanged.
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCjaoeMSfOsYkpm2VqnMt9cY';

for (const dialect of DIALECTS) {
  describe(`open registration is no open redirector (${dialect})`, () => {
    let s: OauthStack;
    let registered: string;
    let adminMade: string;
    before(async () => {
      s = await startOauthApp(dialect, { OAUTH_DYNAMIC_REGISTRATION: 'open' });
      const res = await fetch(`${s.origin}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Anyone',
          redirect_uris: [CALLBACK],
          post_logout_redirect_uris: [BYE],
          token_endpoint_auth_method: 'none',
          scope: 'openid',
        }),
      });
      assert.equal(res.status, 201, await res.clone().text());
      registered = ((await res.json()) as { client_id: string }).client_id;
      const made = await s.admin('POST', '/api/v1/clients', {
        name: 'Admin made',
        type: 'public',
        redirect_uris: [CALLBACK],
        post_logout_redirect_uris: [BYE],
        scopes: ['openid'],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      adminMade = String(made.body.client_id);
    });
    after(() => s?.close());

    const authorize = (clientId: string, extra: Record<string, string>) =>
      cookieBrowser(s.origin)(
        `/oauth2/authorize?${new URLSearchParams({
          client_id: clientId,
          response_type: 'code',
          redirect_uri: CALLBACK,
          scope: 'openid',
          code_challenge: CHALLENGE,
          code_challenge_method: 'S256',
          state: 'st',
          ...extra,
        })}`,
      );

    /** Gatehouse's error page naming `error`: no redirect, no form, no script. */
    const assertErrorPage = async (res: Response, error: string) => {
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null, 'no redirect');
      assert.match(String(res.headers.get('content-type')), /^text\/html/);
      assert.match(String(res.headers.get('content-security-policy')), /form-action 'none'/);
      const html = await res.text();
      assert.ok(html.includes(error), html);
      assert.equal(html.includes(EVIL), false, 'the page names no redirect URI');
      assert.equal(html.includes('<script'), false);
    };

    for (const [what, extra, error] of [
      ['a scope it did not register', { scope: 'openid email' }, 'invalid_scope'],
      ['no PKCE', { code_challenge: '' }, 'invalid_request'],
      ['prompt=none without a session', { prompt: 'none' }, 'login_required'],
      ['an API it may not have', { resource: 'https://mcp.example.test/mcp' }, 'invalid_target'],
    ] as const) {
      it(`an authorization error (${what}) renders the error page for a registered client`, async () => {
        await assertErrorPage(await authorize(registered, extra), error);
      });

      it(`the same error (${what}) still redirects for a client an admin created`, async () => {
        const res = await authorize(adminMade, extra);
        assert.equal(res.status, 303);
        const back = new URL(String(res.headers.get('location')));
        assert.equal(`${back.origin}${back.pathname}`, CALLBACK);
        assert.equal(back.searchParams.get('error'), error);
      });
    }

    it('an error answered by form_post renders the error page for a registered client, no auto-submitted form', async () => {
      await assertErrorPage(
        await authorize(registered, { scope: 'openid email', response_mode: 'form_post' }),
        'invalid_scope',
      );
      const admin = await authorize(adminMade, { scope: 'openid email', response_mode: 'form_post' });
      assert.equal(admin.status, 400, 'form_post answers in the page');
      const html = await admin.text();
      assert.ok(
        html.includes(`action="${CALLBACK}"`) && html.includes('<script>'),
        'the admin client keeps it',
      );
    });

    it('logout without a session shows the confirmation page for a registered client; its click still works', async () => {
      const go = cookieBrowser(s.origin);
      const url = `/oauth2/logout?${new URLSearchParams({
        client_id: registered,
        post_logout_redirect_uri: BYE,
        state: 'st',
      })}`;
      const page = await go(url);
      assert.equal(page.status, 200);
      assert.equal(page.headers.get('location'), null);
      const csp = String(page.headers.get('content-security-policy'));
      assert.equal(csp.includes('script-src'), false, 'no script runs');
      const html = await page.text();
      assert.equal(html.includes('<script'), false, 'the page does not submit itself');
      assert.match(html, /Yes, sign me out/);
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
      assert.ok(xsrf, 'the library’s form');
      const done = await go('/oauth2/logout/confirm', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      });
      assert.equal(done.status, 303, 'after the click');
      assert.equal(done.headers.get('location'), `${BYE}?state=st`);
    });

    it('logout without a session still submits itself for a client an admin created', async () => {
      const page = await cookieBrowser(s.origin)(
        `/oauth2/logout?${new URLSearchParams({ client_id: adminMade, post_logout_redirect_uri: BYE })}`,
      );
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.ok(html.includes('<script>') && html.includes('name="logout" value="yes"'), html);
    });
  });
}
