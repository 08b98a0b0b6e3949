import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { START_LIMIT } from '../../src/modules/providers/flow/start-budget.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from '../oauth/support.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

const SECRET = 'upstream-client-secret-of-test';
const CALLBACK = 'https://app.example/callback';

/**
 * Two holes of docs/api.md §18's `start`: it had no budget (any client could start flows without
 * end, each a database row and a fetch of the provider's discovery), and a `return_to` naming an
 * authorization request was taken on its path alone, live or not.
 */
for (const dialect of DIALECTS) {
  describe(`providers: start's budget and return_to naming an authorization [${dialect}]`, () => {
    let stack: OauthStack;
    let upstream: OidcHarness;
    let client: { client_id: string; client_secret: string };

    const start = (returnTo: string, from = '203.0.113.7') =>
      stack.t.app.inject({
        url: `/api/v1/idp/one/start?return_to=${encodeURIComponent(returnTo)}`,
        remoteAddress: from,
      });

    /** A pending authorization request of a registered client; returns its interaction's uid. */
    async function pendingAuthorization(): Promise<string> {
      const config = await oidc.discovery(
        new URL(stack.origin),
        client.client_id,
        client.client_secret,
        undefined,
        { execute: [oidc.allowInsecureRequests] },
      );
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: oidc.randomState(),
      });
      const res = await fetch(url, { redirect: 'manual' });
      const uid = /\/account\/authorize\/([^/?]+)/.exec(res.headers.get('location') ?? '')?.[1];
      assert.ok(uid, `an interaction: ${res.status} ${res.headers.get('location')}`);
      return uid;
    }

    before(async () => {
      stack = await startOauthApp(dialect);
      upstream = await startOidcProvider({
        clientId: 'gh-one',
        clientSecret: SECRET,
        redirectUris: [`${stack.origin}/api/v1/idp/one/callback`],
      });
      const made = await stack.admin('POST', '/api/v1/idp/providers', {
        name: 'one',
        display_name: 'Provider one',
        issuer: upstream.issuer,
        client_id: upstream.clientId,
        client_secret: SECRET,
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const registered = await stack.admin('POST', '/api/v1/clients', {
        name: 'Some App',
        redirect_uris: [CALLBACK],
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      client = registered.body as unknown as typeof client;
    });
    after(async () => {
      await stack?.close();
      await upstream?.stop();
    });

    it('a live authorization request is a return_to; an unknown, expired or consumed one is 400 validation_failed', async () => {
      const uid = await pendingAuthorization();
      for (const live of [`/account/authorize/${uid}`, `/oauth2/authorize/${uid}`]) {
        const res = await start(live, '198.51.100.1');
        assert.equal(res.statusCode, 302, `${live}: ${res.body}`);
      }
      const refused = async (returnTo: string, why: string) => {
        const res = await start(returnTo, '198.51.100.1');
        assert.equal(res.statusCode, 400, `${why}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(res.json().code, 'validation_failed');
        assert.equal(res.headers['set-cookie'], undefined, `${why}: no flow started`);
      };
      await refused('/account/authorize/unknown-interaction-uid', 'unknown');
      await refused('/oauth2/authorize/unknown-interaction-uid', 'unknown, library path');

      const models = () => stack.t.ctx.db.updateTable('oauth_models').where('model', '=', 'Interaction');
      const expired = await pendingAuthorization();
      await models()
        .set({ expires_at: Date.now() - 1000 })
        .where('id_hash', '=', sha256(expired))
        .execute();
      await refused(`/account/authorize/${expired}`, 'expired');
      const consumed = await pendingAuthorization();
      await models().set({ consumed_at: Date.now() }).where('id_hash', '=', sha256(consumed)).execute();
      await refused(`/oauth2/authorize/${consumed}`, 'consumed');
      // The first one is still live: the refusals were about those interactions, not the path.
      assert.equal((await start(`/account/authorize/${uid}`, '198.51.100.1')).statusCode, 302);
    });

    it(`start allows ${START_LIMIT} per address in 10 minutes, reserved before return_to is read; then 429 problem+json with Retry-After`, async () => {
      for (let i = 0; i < START_LIMIT; i++) {
        // Refused values count too: the budget is reserved before anything is checked.
        const res = await start(i % 2 === 0 ? '/account' : '//evil.example/');
        assert.equal(res.statusCode, i % 2 === 0 ? 302 : 400, `start ${i + 1}: ${res.body}`);
      }
      const over = await start('/account');
      assert.equal(over.statusCode, 429, over.body);
      assert.match(String(over.headers['content-type']), /^application\/problem\+json/);
      assert.equal(over.json().code, 'rate_limited');
      const retryAfter = Number(over.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${over.headers['retry-after']}`);
      assert.equal(over.headers['set-cookie'], undefined, 'no flow started');
      // Another address has its own budget.
      assert.equal((await start('/account', '203.0.113.99')).statusCode, 302);
    });
  });
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
