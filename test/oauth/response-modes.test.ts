import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, REDIRECT, startCodeFlow } from './code-flow.ts';

/*
 * docs/api.md §17, "Flows": the code flow answers by `query` or `form_post`, nothing else, and the
 * `form_post` page is Gatehouse's, its CSP allowing exactly the hash of its auto-submit script.
 */

for (const dialect of DIALECTS) {
  describe(`oauth response modes (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    it('fragment-response-mode-served: a request for it is refused, never answered with a code', async () => {
      const p = await f.person();
      const { callback } = await f.authorize(p, { response_mode: 'fragment' });
      const answer = new URLSearchParams(callback.hash.slice(1) || callback.search.slice(1));
      assert.equal(answer.get('code'), null);
      assert.equal(answer.get('error'), 'invalid_request');
    });

    it('form-post-page-is-the-librarys: form_post answers with Gatehouse’s page: the code in hidden fields, a CSP allowing exactly its one script', async () => {
      const p = await f.person();
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(f.config, {
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        response_mode: 'form_post',
      });
      // Signed in first (query mode), then the form_post request is answered silently.
      await f.authorize(p);
      const res = await p.go(url.href);
      assert.equal(res.status, 200);
      const html = await res.text();
      assert.match(html, /<title>Returning to the application · /);
      assert.ok(!html.includes('Submitting Callback'), 'not the library’s page');
      assert.match(html, new RegExp(`<form method="post" action="${REDIRECT}">`));
      assert.match(html, new RegExp(`name="state" value="${state}"`));
      const code = /name="code" value="([^"]+)"/.exec(html)?.[1];
      assert.ok(code, 'the code is a hidden field');
      const scripts = [...html.matchAll(/<script>([^<]*)<\/script>/g)].map((m) => m[1] ?? '');
      assert.equal(scripts.length, 1);
      const hash = createHash('sha256')
        .update(scripts[0] ?? '')
        .digest('base64');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, '\\$&')}'(;|$)`));
      // Only Gatehouse's own stylesheet and logo (the hosted pages' look), by path: no external request.
      const loaded = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? '');
      for (const url of loaded) assert.match(url, /^\/(?!\/)/, `nothing loaded from elsewhere: ${url}`);
      // The page posts a working answer: the relying party takes it as the form would send it.
      const fields = new URLSearchParams();
      for (const m of html.matchAll(/name="([^"]+)" value="([^"]*)"/g)) fields.set(m[1] ?? '', m[2] ?? '');
      const posted = new Request(REDIRECT, { method: 'POST', body: fields });
      const tokens = await oidc.authorizationCodeGrant(f.config, posted, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      assert.ok(tokens.id_token);
    });
  });
}
