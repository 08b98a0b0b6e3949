import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * consent-beyond-the-page: a client registered with API scopes only had no `scope` in the library's
 * client metadata, which the library reads as "every scope the provider supports": asking for
 * `openid email profile offline_access` with its API scope showed a consent page naming the API
 * scope alone, and allowing it granted all four (an ID token with the e-mail and name, an offline
 * refresh token, the consent stored); a first-party client got the same without a page. Now a
 * scope the client has not registered, or an API scope asked without its `resource`, answers
 * `invalid_scope` (docs/api.md §17), and consent grants and stores exactly what the page listed.
 */

const NOTES = 'https://notes.example.test/';
const OIDC_ALL = 'openid email profile offline_access';

for (const dialect of DIALECTS) {
  describe(`consent grants exactly what the page showed (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
      const made = await f.s.admin('POST', '/api/v1/resources', {
        identifier: NOTES,
        name: 'Notes API',
        scopes: [{ name: 'read:notes', description: 'Read your notes' }],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
    });
    after(() => f?.close());

    const apiOnly = (name: string, firstParty: boolean) =>
      f.client(name, { scopes: ['read:notes'], resources: [NOTES], first_party: firstParty });

    const grantsOf = async (access: string) =>
      (await f.api(access, 'GET', '/api/v1/grants')).body.data as Array<{
        client_id: string;
        scopes: string[];
        resources: Record<string, string[]>;
      }>;

    for (const firstParty of [false, true]) {
      const kind = firstParty ? 'a first-party' : 'a third-party';
      it(`${kind} client registered with API scopes only: OpenID scopes answer invalid_scope, nothing is granted`, async () => {
        const { app, config } = await apiOnly(`API only ${kind}`, firstParty);
        const p = await f.person();
        const { callback } = await f.authorize(
          p,
          { scope: `${OIDC_ALL} read:notes`, resource: NOTES, prompt: 'consent' },
          config,
        );
        assert.equal(callback.searchParams.get('error'), 'invalid_scope');
        assert.equal(callback.searchParams.get('code'), null, 'no code');
        assert.equal(
          (await grantsOf(p.access)).some((g) => g.client_id === app.client_id),
          false,
          'no consent stored',
        );
      });

      it(`${kind} client: an API scope asked without its resource answers invalid_scope`, async () => {
        const { config } = await f.client(`Mixed ${kind}`, {
          scopes: ['openid', 'email', 'read:notes'],
          resources: [NOTES],
          first_party: firstParty,
        });
        const p = await f.person();
        const { callback } = await f.authorize(p, { scope: 'openid read:notes' }, config);
        assert.equal(callback.searchParams.get('error'), 'invalid_scope');
        assert.equal(callback.searchParams.get('code'), null, 'no code');
        // With its resource the same request goes through, and the ID token holds no e-mail (not asked).
        const tokens = await f.signIn(p, { scope: 'openid read:notes', resource: NOTES }, config);
        assert.equal(tokens.claims()?.email, undefined);
        assert.equal(tokens.scope, 'read:notes');
      });
    }

    it('client credentials: an API-only client asking for OpenID scopes, or its API scope without the resource, answers invalid_scope', async () => {
      const { config } = await f.client('Indexer', {
        application_type: 'web',
        redirect_uris: [],
        grant_types: ['client_credentials'],
        scopes: ['read:notes'],
        resources: [NOTES],
      });
      const invalidScope = (err: oidc.ResponseBodyError) => err.error === 'invalid_scope';
      await assert.rejects(oidc.clientCredentialsGrant(config, { scope: 'openid email' }), invalidScope);
      await assert.rejects(oidc.clientCredentialsGrant(config, { scope: 'read:notes' }), invalidScope);
      const token = await oidc.clientCredentialsGrant(config, { scope: 'read:notes', resource: NOTES });
      assert.equal(token.scope, 'read:notes');
    });

    it('a third-party client with OpenID scopes: prompt=consent grants and stores exactly the listed scopes', async () => {
      const { app, config } = await f.client('Listed', {
        scopes: ['openid', 'email', 'offline_access', 'read:notes'],
        resources: [NOTES],
      });
      const p = await f.person();
      const { uid, view } = await consentPage(f, p, config, {
        scope: 'openid email read:notes',
        resource: NOTES,
        prompt: 'consent',
      });
      assert.deepEqual(
        view.scopes.map((s) => s.name),
        ['openid', 'email'],
      );
      assert.deepEqual(view.apis, [
        {
          identifier: NOTES,
          name: 'Notes API',
          scopes: [{ name: 'read:notes', description: 'Read your notes' }],
        },
      ]);
      const allowed = await p.go(`/account/authorize/${uid}/consent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
        body: JSON.stringify({ allow: true }),
      });
      assert.equal(allowed.status, 200);
      const stored = (await grantsOf(p.access)).find((g) => g.client_id === app.client_id);
      assert.deepEqual(stored?.scopes.sort(), ['email', 'openid']);
      assert.deepEqual(stored?.resources, { [NOTES]: ['read:notes'] });
    });
  });
}

/** Starts an authorization that stops on the hosted consent page: its uid and what it lists. */
async function consentPage(
  f: CodeFlow,
  p: Awaited<ReturnType<CodeFlow['person']>>,
  config: oidc.Configuration,
  extra: Record<string, string>,
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1:9/cb',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: oidc.randomState(),
    ...extra,
  });
  let res = await p.go(url.href);
  for (let hop = 0; hop < 6; hop += 1) {
    const location = res.headers.get('location');
    assert.ok(location, `a redirect (status ${res.status})`);
    const uid = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, f.s.origin).pathname)?.[1];
    if (uid) {
      const view = (await (await p.go(`/account/authorize/${uid}/details`)).json()) as {
        prompt: string;
        scopes: Array<{ name: string }>;
        apis: unknown[];
      };
      if (view.prompt === 'consent') return { uid, view };
      const step = await p.go(`/account/authorize/${uid}/login`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(step.status, 200, await step.clone().text());
      res = await p.go(((await step.json()) as { redirect_to: string }).redirect_to);
    } else {
      res = await p.go(location);
    }
  }
  throw new Error('no consent page');
}
