import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * What common relying-party libraries need of the authorization server (docs/api.md §17, the
 * contract's relying-party revisions; docs/oauth.md): a web app under development registers its
 * callback on a loopback host over plain http, with the port matched exactly (the library widens
 * the port for native clients only, RFC 8252 §7.3).
 */

const LOCAL = 'http://localhost:3999/auth/callback';

for (const dialect of DIALECTS) {
  describe(`oauth for relying parties: loopback web callbacks (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    it('accepts http on localhost, 127.0.0.1 and [::1] for a web client; any other http host stays refused', async () => {
      const ok = await f.s.admin('POST', '/api/v1/clients', {
        name: 'Dev app',
        redirect_uris: [LOCAL, 'http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb'],
        post_logout_redirect_uris: ['http://localhost:3999/'],
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      for (const uri of [
        'http://app.example.test/cb',
        'http://localhost.example.test/cb',
        'http://10.0.0.1/cb',
      ]) {
        const refused = await f.s.admin('POST', '/api/v1/clients', { name: 'x', redirect_uris: [uri] });
        assert.equal(refused.status, 400, uri);
        assert.equal(refused.body.code, 'validation_failed', uri);
      }
    });

    it('signs a web app in at http://localhost:<port>, and refuses the same callback on another port', async () => {
      const dev = await f.client('Dev web app', {
        application_type: 'web',
        redirect_uris: [LOCAL],
        grant_types: ['authorization_code'],
      });
      const p = await f.person();
      const tokens = await f.signIn(p, { redirect_uri: LOCAL }, dev.config);
      assert.equal(tokens.claims()?.sub, p.id);
      // The same host on another port is another URI: the library shows its error page, no redirect.
      const other = oidc.buildAuthorizationUrl(dev.config, {
        redirect_uri: 'http://localhost:4000/auth/callback',
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const res = await fetch(other, { redirect: 'manual' });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
      assert.match(await res.text(), /redirect_uri/);
    });
  });
}
