import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, type Person, startCodeFlow } from './code-flow.ts';

/*
 * grants-review: OWASP ASVS 5.0 10.4.9 (refresh tokens and reference access tokens revocable by
 * the user at the authorization server) and 10.7.3 (the user reviews and revokes what they
 * consented to), docs/api.md §17 ("A user sees and revokes connected apps"). The browser test
 * revokes from /account and checks one access token; what held only by reading the code is pinned
 * here: the revocation ends the refresh tokens too (an offline_access one included, which outlives
 * a logout), refresh answers invalid_grant and introspection active:false for each token, the
 * stored consent is gone (the next prompt=none cannot proceed silently), another application's
 * grant is untouched, and another user can neither see nor revoke the grant.
 */

/** A web client's redirect URI: the hosted flow never follows it, so no server needs to answer there. */
const WEB = 'https://wiki.example.test/cb';

interface ConnectedApp {
  client_id: string;
  name: string;
  scopes: string[];
}

/** The prompts the hosted pages ask on the way through one authorization request (each answered). */
async function promptsOf(f: CodeFlow, p: Person, rp: oidc.Configuration): Promise<string[]> {
  const url = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: WEB,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
  const prompts: string[] = [];
  let res = await p.go(url.href);
  for (let hop = 0; hop < 8; hop += 1) {
    const location = res.headers.get('location');
    assert.ok(location, `a redirect (status ${res.status})`);
    if (location.startsWith(WEB)) return prompts;
    const interaction = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, f.s.origin).pathname);
    if (!interaction) {
      res = await p.go(location);
      continue;
    }
    const uid = interaction[1];
    const prompt = ((await (await p.go(`/account/authorize/${uid}/details`)).json()) as { prompt: string })
      .prompt;
    prompts.push(prompt);
    const step = await p.go(`/account/authorize/${uid}/${prompt}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.access}`, 'content-type': 'application/json' },
      body: prompt === 'consent' ? JSON.stringify({ allow: true }) : '{}',
    });
    assert.equal(step.status, 200, await step.clone().text());
    res = await p.go(((await step.json()) as { redirect_to: string }).redirect_to);
  }
  throw new Error('too many redirects');
}

for (const dialect of DIALECTS) {
  describe(`connected apps: review and revoke (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    const listed = async (access: string) => {
      const res = await f.api(access, 'GET', '/api/v1/grants');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data as ConnectedApp[];
    };

    it('the user lists the apps they allowed, with the scopes consented; another user sees none of them', async () => {
      const wiki = await f.client('Wiki', { first_party: false });
      const p = await f.person();
      await f.signIn(p, { scope: 'openid email offline_access', prompt: 'consent' }, wiki.config);
      const mine = (await listed(p.access)).find((a) => a.client_id === wiki.app.client_id);
      assert.equal(mine?.name, 'Wiki');
      assert.deepEqual([...(mine?.scopes ?? [])].sort(), ['email', 'offline_access', 'openid']);
      const other = await f.person();
      assert.equal(
        (await listed(other.access)).some((a) => a.client_id === wiki.app.client_id),
        false,
        'a grant is listed to its own user only',
      );
    });

    it('revoking a connected app ends its refresh and access tokens (invalid_grant, introspection active:false) and its consent', async () => {
      // A confidential web client: the consent stored for it lets prompt=none through (a third-party
      // native client is asked every time, so it could not show the consent is gone).
      const wiki = await f.client('Wiki 2', {
        first_party: false,
        application_type: 'web',
        redirect_uris: [WEB],
      });
      const p = await f.person();
      const offline = await f.signIn(
        p,
        { scope: 'openid email offline_access', prompt: 'consent', redirect_uri: WEB },
        wiki.config,
      );
      const silently = async () =>
        (await f.authorize(p, { prompt: 'none', scope: 'openid email', redirect_uri: WEB }, wiki.config))
          .callback;
      assert.ok(
        (await silently()).searchParams.get('code'),
        'the control: the consent lets prompt=none through',
      );
      // A rotated refresh token (the one the app holds now) and the access token it came with.
      const rotated = await oidc.refreshTokenGrant(wiki.config, String(offline.refresh_token));
      const notes = await f.signIn(p);
      const active = async (token: string) => (await oidc.tokenIntrospection(wiki.config, token)).active;
      assert.equal(await active(rotated.access_token), true, 'the control: live before the revocation');
      assert.equal(await active(String(rotated.refresh_token)), true);

      const res = await f.api(p.access, 'DELETE', `/api/v1/grants/${wiki.app.client_id}`);
      assert.equal(res.status, 204, JSON.stringify(res.body));

      assert.equal(await active(rotated.access_token), false, 'the access token introspects inactive');
      assert.equal(
        await active(String(rotated.refresh_token)),
        false,
        'the refresh token introspects inactive',
      );
      for (const refresh of [rotated.refresh_token, offline.refresh_token]) {
        await assert.rejects(
          oidc.refreshTokenGrant(wiki.config, String(refresh)),
          (err: oidc.ResponseBodyError) => {
            assert.equal(err.error, 'invalid_grant');
            return true;
          },
        );
      }
      assert.equal(
        (await listed(p.access)).some((a) => a.client_id === wiki.app.client_id),
        false,
        'no longer listed',
      );
      // The consent went with it: the app cannot get a code silently, the user is asked again.
      // Nothing left to revoke: 404 problem+json.
      const again = await f.api(p.access, 'DELETE', `/api/v1/grants/${wiki.app.client_id}`);
      assert.equal(again.status, 404);
      assert.equal(again.body.code, 'client_not_found');
      // The browser's grant ended with it (docs/oauth.md: "a new sign-in and consent")…
      const silent = await silently();
      assert.equal(silent.searchParams.get('code'), null, silent.href);
      assert.equal(silent.searchParams.get('error'), 'login_required', silent.href);
      // …and the consent went too: the next authorization asks for it again.
      assert.deepEqual(await promptsOf(f, p, wiki.config), ['login', 'consent']);
      // Another application's grant of the same user is untouched.
      assert.equal(await f.active(String(notes.refresh_token)), true, 'the other app keeps its grant');
    });

    it('another user cannot revoke someone’s grant: 404, and the grant stays live', async () => {
      const wiki = await f.client('Wiki 3', { first_party: false });
      const p = await f.person();
      const tokens = await f.signIn(
        p,
        { scope: 'openid email offline_access', prompt: 'consent' },
        wiki.config,
      );
      const intruder = await f.person();
      const res = await f.api(intruder.access, 'DELETE', `/api/v1/grants/${wiki.app.client_id}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'client_not_found');
      assert.equal((await oidc.tokenIntrospection(wiki.config, String(tokens.refresh_token))).active, true);
      assert.equal(
        (await listed(p.access)).some((a) => a.client_id === wiki.app.client_id),
        true,
        'still listed to its user',
      );
      // Without a token the endpoints answer 401.
      const anonymous = await fetch(`${f.s.origin}/api/v1/grants/${wiki.app.client_id}`, {
        method: 'DELETE',
      });
      assert.equal(anonymous.status, 401);
    });
  });
}
