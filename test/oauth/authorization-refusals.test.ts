import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * What the authorization server refuses (docs/api.md §17; OWASP ASVS 5.0 10.4.1, 10.4.3, 10.4.4,
 * 10.4.6, 10.6.1). Each held by oidc-provider's configuration and by nothing in Gatehouse's tests:
 * asvs-authorization-refusals: a redirect URI other than a registered one, byte for byte, is never
 * redirected to; PKCE is required (no code_challenge, or `plain`, is refused; a code is exchanged
 * only with its verifier); only `response_type=code` is served (no implicit or hybrid tokens in
 * the front channel); no password grant, and a client gets only the grants it was registered for;
 * an authorization code lives 60 seconds and is refused once its stored expiry has passed.
 */

const WEB = 'https://app.example.test/cb';
/** The default response mode, and each one asked for explicitly. */
const MODES: Record<string, string>[] = [{}, { response_mode: 'query' }, { response_mode: 'form_post' }];

/** The answer an authorization request gets: where it redirects (if it does), and the parameters there. */
interface Answer {
  status: number;
  body: string;
  location: string | null;
  params: URLSearchParams;
}

for (const dialect of DIALECTS) {
  describe(`oauth authorization refusals (${dialect})`, () => {
    let f: CodeFlow;
    let web: Awaited<ReturnType<CodeFlow['client']>>;
    before(async () => {
      f = await startCodeFlow(dialect);
      web = await f.client('Web app', {
        application_type: 'web',
        redirect_uris: [WEB],
        grant_types: ['authorization_code'],
      });
    });
    after(() => f?.close());

    /** An authorization request with exactly these parameters, from a fresh browser. */
    const ask = async (params: Record<string, string>): Promise<Answer> => {
      const url = new URL(`${f.s.origin}/oauth2/authorize`);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      const res = await fetch(url, { redirect: 'manual' });
      const body = await res.text();
      const location = res.headers.get('location');
      const at = location ? new URL(location, f.s.origin) : null;
      const params2 = new URLSearchParams(at ? at.hash.slice(1) || at.search.slice(1) : '');
      return { status: res.status, body, location, params: params2 };
    };
    const pkce = async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
    };
    const webRequest = async (extra: Record<string, string> = {}) => ({
      client_id: web.app.client_id,
      redirect_uri: WEB,
      response_type: 'code',
      scope: 'openid email',
      code_challenge: (await pkce()).challenge,
      code_challenge_method: 'S256',
      state: 'a-state-value',
      ...extra,
    });
    const token = async (body: Record<string, string>, basic?: { id: string; secret: string }) => {
      const res = await fetch(`${f.s.origin}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(basic
            ? { authorization: `Basic ${Buffer.from(`${basic.id}:${basic.secret}`).toString('base64')}` }
            : {}),
        },
        body: new URLSearchParams(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    it('redirect URIs are compared exactly: a near miss of the registered one is never redirected to', async () => {
      // The control: the registered URI is answered with a redirect to it (to the sign-in first).
      const good = await ask(await webRequest());
      assert.equal(good.status, 303);
      assert.ok(good.location && !good.location.startsWith('https://'), 'on to the hosted sign-in');
      for (const uri of [
        `${WEB}/`,
        `${WEB}?next=1`,
        'https://app.example.test/CB',
        'https://app.example.test/cbx',
        'https://app.example.test:8443/cb',
        'http://app.example.test/cb',
        'https://APP.example.test/cb',
        'https://evil.example/cb',
      ]) {
        const answer = await ask(await webRequest({ redirect_uri: uri }));
        assert.equal(answer.status, 400, uri);
        assert.equal(answer.location, null, `${uri}: no redirect at all`);
      }
    });

    it('PKCE is required: no code_challenge, or the plain method, is refused at the authorization endpoint', async () => {
      const { code_challenge: _c, code_challenge_method: _m, ...without } = await webRequest();
      for (const params of [without, await webRequest({ code_challenge_method: 'plain' })]) {
        const answer = await ask(params);
        assert.ok(answer.location?.startsWith(`${WEB}?`), String(answer.location));
        assert.equal(answer.params.get('error'), 'invalid_request');
        assert.equal(answer.params.get('code'), null);
      }
    });

    it('a code is exchanged only with its own code_verifier', async () => {
      const p = await f.person();
      for (const verifier of [oidc.randomPKCECodeVerifier(), undefined]) {
        const { callback, state } = await f.authorize(p);
        await assert.rejects(
          oidc.authorizationCodeGrant(f.config, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
          }),
          (err: oidc.ResponseBodyError) => {
            assert.equal(err.error, 'invalid_grant', err.message);
            return true;
          },
        );
      }
      // The control: with its own verifier a code is exchanged.
      assert.ok((await f.signIn(p)).access_token);
    });

    it('only response_type=code is served: implicit and hybrid requests get no token and no code', async () => {
      for (const type of ['token', 'id_token', 'id_token token', 'code token', 'code id_token']) {
        for (const mode of MODES) {
          const answer = await ask(
            await webRequest({ response_type: type, nonce: 'a-nonce-value', ...mode }),
          );
          const what = `${type} ${JSON.stringify(mode)}: ${answer.status} ${answer.location}`;
          assert.equal(answer.params.get('access_token'), null, what);
          assert.equal(answer.params.get('id_token'), null, what);
          assert.equal(answer.params.get('code'), null, what);
          assert.doesNotMatch(answer.body, /name="(access_token|id_token|code)"/, what);
          // Refused in the front channel (a redirect carrying the error) or with a plain 400.
          if (answer.location !== null) assert.equal(answer.params.get('error'), 'invalid_request', what);
          else assert.equal(answer.status, 400, what);
        }
      }
    });

    it('no password grant, and a client gets only the grants it was registered for', async () => {
      const basic = { id: web.app.client_id, secret: web.app.client_secret };
      const password = await token(
        { grant_type: 'password', username: 'a@example.test', password: 'x' },
        basic,
      );
      assert.equal(password.status, 400);
      assert.equal(password.body.error, 'unsupported_grant_type');
      // Registered for authorization_code only: neither client credentials nor refresh tokens.
      const credentials = await token({ grant_type: 'client_credentials' }, basic);
      // oidc-provider answers a grant the client is not registered for with invalid_request
      // ("requested grant type is not allowed for this client"); no token either way.
      assert.equal(credentials.status, 400);
      assert.equal(credentials.body.error, 'invalid_request');
      assert.equal(credentials.body.access_token, undefined);
      const refresh = await token({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(43) }, basic);
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body.error, 'invalid_request');
      // A public client cannot use client credentials: it cannot authenticate.
      const publicClient = await token({ grant_type: 'client_credentials', client_id: f.app.client_id });
      assert.equal(publicClient.status, 401);
      assert.equal(publicClient.body.error, 'invalid_client');
    });

    it('an authorization code lives 60 seconds and is refused once its stored expiry has passed', async () => {
      const p = await f.person();
      const { callback, verifier, state } = await f.authorize(p);
      const code = callback.searchParams.get('code');
      assert.ok(code);
      const idHash = createHash('sha256').update(code).digest('base64url');
      const where = f.s.t.ctx.db
        .selectFrom('oauth_models')
        .select(['payload', 'expires_at'])
        .where('model', '=', 'AuthorizationCode')
        .where('id_hash', '=', idHash);
      const row = await where.executeTakeFirstOrThrow();
      const payload = JSON.parse(row.payload) as { iat: number; exp: number };
      assert.equal(payload.exp - payload.iat, 60, 'the code’s lifetime (docs/oauth.md, "Settings")');
      // The expiry reached, without waiting: the stored expiry moved into the past.
      await f.s.t.ctx.db
        .updateTable('oauth_models')
        .set({ expires_at: Date.now() - 1000 })
        .where('model', '=', 'AuthorizationCode')
        .where('id_hash', '=', idHash)
        .execute();
      await assert.rejects(
        oidc.authorizationCodeGrant(f.config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
        (err: oidc.ResponseBodyError) => {
          assert.equal(err.error, 'invalid_grant');
          return true;
        },
      );
    });
  });
}
