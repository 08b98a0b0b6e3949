import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, postVerify, problem } from '../helpers/idp.ts';
import { authorizeAt } from '../support/oidc-browser.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

/*
 * OIDC Core 5.4: a provider may serve the `email` and `profile` claims from its userinfo endpoint
 * only, and oidc-provider does so by default (`conformIdTokenClaims`), so a Gatehouse, Logto or
 * node-oidc-provider upstream sends an ID token with no address in it. The hole pinned here: such a
 * provider could neither provision nor link ("The provider sent no usable email address"), because
 * only the ID token was read. Userinfo is read (its `sub` checked against the ID token's) when the
 * ID token lacks a claim: always in the redirect flow, and at POST /idp/verify with `access_token`.
 */

const SECRET = 'userinfo-upstream-secret-of-test';
const CALLBACK = `${PUBLIC_URL}/api/v1/idp/default/callback`;

/** The cookie value a response set, by name. */
function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${name}=`));
  return line === undefined ? undefined : line.slice(name.length + 1).split(';')[0];
}

for (const dialect of DIALECTS) {
  describe(`an upstream oidc-provider at its defaults: email and profile only from userinfo [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    before(async () => {
      op = await startOidcProvider({
        conformIdTokenClaims: true,
        clientSecret: SECRET,
        redirectUris: [CALLBACK],
        accounts: {
          dana: { email: 'dana@example.com', email_verified: true, name: 'Dana Upstream' },
          erin: { email: 'erin@example.com', email_verified: true, name: 'Erin Upstream' },
          frank: { email: 'frank@example.com', email_verified: false, name: 'Frank Upstream' },
          gina: { email: 'gina@example.com', email_verified: true, name: 'Gina Upstream' },
        },
      });
      t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', ...idpEnv(op, { OIDC_CLIENT_SECRET: SECRET }) },
      });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    const userByEmail = (email: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();

    it('the ID token carries no address, so POST /idp/verify without an access token still cannot provision', async () => {
      const signIn = await op.signIn('dana');
      assert.equal(signIn.claims.sub, 'dana');
      assert.equal(signIn.claims.email, undefined, 'the provider keeps email for userinfo');
      assert.equal(signIn.claims.name, undefined, 'and the profile claims');
      const res = await postVerify(t, { id_token: signIn.idToken, nonce: signIn.nonce });
      assert.equal(res.statusCode, 403, res.body);
      assert.match(problem(res).detail ?? '', /no usable email address/);
      assert.deepEqual(await countFor(t, 'dana@example.com', 'dana'), { users: 0, identities: 0 });
    });

    it('POST /idp/verify with the access token reads userinfo: provisions with the address, its verification and the name', async () => {
      const signIn = await op.signIn('dana');
      const res = await postVerify(t, {
        id_token: signIn.idToken,
        nonce: signIn.nonce,
        access_token: signIn.accessToken,
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json<{ created: boolean; user: { email: string; name: string; email_verified: boolean } }>(
        res,
      );
      assert.equal(body.created, true);
      assert.equal(body.user.email, 'dana@example.com');
      assert.equal(body.user.email_verified, true);
      assert.equal(body.user.name, 'Dana Upstream');
      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('subject', '=', 'dana')
        .executeTakeFirstOrThrow();
      assert.equal(identity.issuer, op.issuer);
      assert.equal(identity.email, 'dana@example.com');
    });

    it("refuses userinfo about another subject: another account's access token is 401 idp_token_invalid, nothing written", async () => {
      const gina = await op.signIn('gina');
      const erin = await op.signIn('erin');
      const res = await postVerify(t, {
        id_token: gina.idToken,
        nonce: gina.nonce,
        access_token: erin.accessToken,
      });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(problem(res).code, 'idp_token_invalid');
      assert.match(problem(res).detail ?? '', /Userinfo rejected: its sub is not the ID token's/);
      assert.ok(!res.body.includes(erin.accessToken), 'the token is never repeated back');
      assert.deepEqual(await countFor(t, 'gina@example.com', 'gina'), { users: 0, identities: 0 });
      assert.deepEqual(await countFor(t, 'erin@example.com', 'erin'), { users: 0, identities: 0 });
    });

    it("takes the address's verification from userinfo: an unverified address is refused as from an ID token", async () => {
      const frank = await op.signIn('frank');
      const res = await postVerify(t, {
        id_token: frank.idToken,
        nonce: frank.nonce,
        access_token: frank.accessToken,
      });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(problem(res).detail, 'The provider has not verified this e-mail address');
      assert.equal(await userByEmail('frank@example.com'), undefined);
    });

    it('the redirect flow always reads userinfo: the `default` provider provisions with the address and the name', async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/default/start?return_to=/account' });
      assert.equal(start.statusCode, 302, start.body);
      const flow = setCookie(start, 'gatehouse_idp_flow');
      assert.ok(flow);
      const back = await authorizeAt(String(start.headers.location), 'erin', CALLBACK);
      const res = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${flow}` },
      });
      assert.equal(res.statusCode, 200, `${res.statusCode} ${res.headers.location ?? ''} ${res.body}`);
      assert.ok(setCookie(res, 'gatehouse_refresh'), 'signed in');
      const user = await userByEmail('erin@example.com');
      assert.ok(user, 'provisioned from the userinfo address');
      assert.equal(user.email_verified, 1);
      assert.equal(user.name, 'Erin Upstream');
      assert.equal(user.created_via, 'idp');
    });
  });
}
