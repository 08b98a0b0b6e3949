import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from '../oauth/code-flow.ts';
import { type HookReceiver, hookEnv, jwtPayload, startHookReceiver } from './receiver.ts';

/*
 * The claims hook in the authorization server (docs/api.md §21, docs/claims-hook.md): a real
 * receiver verifying every call with `standardwebhooks`, openid-client as the relying party. A
 * user's access token for an API (an RFC 9068 JWT) carries the hook's claims on the code and the
 * refresh grant; a refused hook answers RFC 6749's `server_error` and, on the refresh grant, leaves
 * the refresh token unused (the hook is asked before the library consumes it), so the next refresh
 * with the same token works; client-credentials tokens are no user's and never call it.
 */

const NOTES = 'https://notes.example.test/';

for (const dialect of DIALECTS) {
  describe(`claims hook in the authorization server (${dialect})`, () => {
    let hook: HookReceiver;
    let f: CodeFlow;
    let config: oidc.Configuration;
    before(async () => {
      hook = await startHookReceiver();
      f = await startCodeFlow(
        dialect,
        hookEnv(hook, { TOKEN_HOOK_TIMEOUT_MS: '1000', TOKEN_HOOK_ID_TOKEN_CLAIMS: 'plan,tier' }),
      );
      const made = await f.s.admin('POST', '/api/v1/resources', {
        identifier: NOTES,
        name: 'Notes API',
        scopes: [{ name: 'read:notes', description: 'Read your notes' }],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      ({ config } = await f.client('Notes with an API', {
        first_party: true,
        scopes: ['openid', 'email', 'offline_access', 'read:notes'],
        resources: [NOTES],
      }));
    });
    after(async () => {
      await f?.close();
      await hook?.close();
    });

    const serverError = (err: oidc.ResponseBodyError) => {
      assert.equal(err.error, 'server_error', `${err.name}: ${err.message} ${JSON.stringify(err.cause)}`);
      assert.ok(!String(err.error_description).includes('127.0.0.1'), 'no hook URL in the answer');
      return true;
    };

    it('code grant: the API token carries the claims; the call saw every claim of that token, signed', async () => {
      hook.mode = 'example';
      hook.decide = ({ client_id }) => ({ plan: 'pro', via: client_id });
      const p = await f.person();
      const from = hook.calls.length;
      const tokens = await f.signIn(p, { scope: 'openid read:notes', resource: NOTES }, config);
      const claims = jwtPayload(tokens.access_token);
      assert.equal(claims.plan, 'pro');
      assert.equal(claims.via, claims.client_id);
      const call = hook.calls.slice(from).find((c) => c.body.data.client_id !== null);
      assert.ok(call, 'the authorization server called the hook');
      assert.equal(call.verified, true);
      const { data } = call.body;
      assert.equal(data.token, 'access_token');
      assert.equal(data.user.id, p.id);
      assert.equal(data.audience, NOTES);
      assert.equal(data.organization, null);
      const { plan: _p, via: _v, ...signed } = claims;
      assert.deepEqual(data.claims, signed, 'every claim of the token, as signed');
      for (const secret of [tokens.access_token, String(tokens.refresh_token), String(tokens.id_token)]) {
        assert.ok(!call.raw.includes(secret), 'no token is sent');
      }
    });

    it('refresh grant: merged; refused (deny) answers server_error and the same refresh token works after', async () => {
      hook.mode = 'example';
      hook.decide = () => ({ plan: 'pro' });
      const p = await f.person();
      const tokens = await f.signIn(
        p,
        { scope: 'openid offline_access read:notes', resource: NOTES },
        config,
      );
      const refresh = String(tokens.refresh_token);
      assert.ok(tokens.refresh_token, 'a refresh token was issued');

      for (const mode of [
        { status: 500 },
        { status: 200, body: '' },
        { status: 200, body: '{"claims":{"scope":"admin"}}' },
        { status: 200, body: '{"claims":{"plan":"pro"}}', delayMs: 2500 },
      ]) {
        hook.mode = mode;
        await assert.rejects(oidc.refreshTokenGrant(config, refresh, { resource: NOTES }), serverError);
      }
      assert.equal(
        (await oidc.tokenIntrospection(config, refresh)).active,
        true,
        'the refresh token is still active (not consumed)',
      );

      hook.mode = 'example';
      hook.decide = ({ claims }) => ({ plan: 'enterprise', seen_scope: claims.scope });
      const next = await oidc.refreshTokenGrant(config, refresh, { resource: NOTES });
      const claims = jwtPayload(next.access_token);
      assert.equal(claims.plan, 'enterprise');
      assert.equal(claims.seen_scope, 'read:notes', 'the hook saw the scope the token got');
      assert.equal(claims.aud, NOTES);
      // The last access-token call (the ID token of this refresh is asked after it).
      const call = hook.calls.findLast((c) => c.body.data.token === 'access_token')!;
      assert.equal(call.verified, true);
      const { plan: _p, seen_scope: _s, jti: _j, iat: _i, exp: _e, ...signed } = claims;
      const { iat: _ci, exp: _ce, ...sent } = call.body.data.claims;
      assert.deepEqual(
        sent,
        signed,
        'the refresh call names the claims the token got (its jti is drawn later)',
      );
      assert.ok(Math.abs(Number(call.body.data.claims.exp) - Number(claims.exp)) <= 2);
      // It rotated this time; the rotated token presented again is a reuse, as always.
      const third = await oidc.refreshTokenGrant(config, String(next.refresh_token), { resource: NOTES });
      assert.ok(third.access_token);
      await assert.rejects(oidc.refreshTokenGrant(config, refresh), (err: oidc.ResponseBodyError) => {
        assert.equal(err.error, 'invalid_grant');
        return true;
      });
    });

    it('code grant: the ID token carries the declared hook claims; the call names token id_token, audience the client', async () => {
      hook.mode = 'example';
      hook.decide = ({ token }) =>
        token === 'id_token' ? { tier: 'gold', undeclared: 'left out' } : { plan: 'pro' };
      const p = await f.person();
      const from = hook.calls.length;
      const tokens = await f.signIn(p, { scope: 'openid email read:notes', resource: NOTES }, config);
      const id = jwtPayload(String(tokens.id_token));
      assert.equal(id.tier, 'gold', 'a declared claim is released');
      assert.equal(id.undeclared, undefined, 'an undeclared one is left out');
      assert.equal(id.email, p.email, 'the claims Gatehouse vouches for stay');
      assert.equal(jwtPayload(tokens.access_token).tier, undefined, 'the access token got its own answer');
      const call = hook.calls.slice(from).find((c) => c.body.data.token === 'id_token');
      assert.ok(call, 'the hook was called for the ID token');
      assert.equal(call.verified, true);
      const { data } = call.body;
      assert.equal(data.client_id, id.aud);
      assert.equal(data.audience, id.aud, 'an ID token is for its client');
      assert.equal(data.user.id, p.id);
      assert.equal(data.organization, null);
      assert.equal(data.claims.sub, p.id);
      assert.equal(data.claims.email, p.email);
      assert.ok(!call.raw.includes(tokens.access_token), 'no token is sent');
    });

    it('ID token refused (deny): server_error on the code grant; on the refresh grant the refresh token stays usable', async () => {
      hook.mode = 'example';
      hook.decide = () => ({ plan: 'pro' });
      const p = await f.person();
      const tokens = await f.signIn(
        p,
        { scope: 'openid offline_access read:notes', resource: NOTES },
        config,
      );
      const refresh = String(tokens.refresh_token);
      // Only the ID token's call fails: an answer setting `email`, a claim Gatehouse vouches for.
      hook.decide = ({ token }) => (token === 'id_token' ? { email: 'boss@example.test' } : { plan: 'pro' });
      await assert.rejects(oidc.refreshTokenGrant(config, refresh, { resource: NOTES }), serverError);
      assert.equal(
        (await oidc.tokenIntrospection(config, refresh)).active,
        true,
        'the refresh token is still active (the ID token was asked before it was used)',
      );
      const { callback, verifier, state } = await f.authorize(
        p,
        { scope: 'openid read:notes', resource: NOTES },
        config,
      );
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
        serverError,
      );
      hook.decide = () => ({ plan: 'pro', tier: 'silver' });
      const next = await oidc.refreshTokenGrant(config, refresh, { resource: NOTES });
      assert.equal(jwtPayload(String(next.id_token)).tier, 'silver');
    });

    it('code grant refused (deny): server_error, no token', async () => {
      hook.mode = 'example';
      const p = await f.person();
      const { callback, verifier, state } = await f.authorize(
        p,
        { scope: 'openid read:notes', resource: NOTES },
        config,
      );
      hook.mode = { status: 503 };
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
        serverError,
      );
    });

    it('client credentials: no user, no call', async () => {
      const made = await f.s.admin('POST', '/api/v1/clients', {
        name: 'Worker',
        grant_types: ['client_credentials'],
        scopes: ['read:notes'],
        resources: [NOTES],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const worker = made.body as { client_id: string; client_secret: string };
      const rp = await oidc.discovery(
        new URL(f.s.origin),
        worker.client_id,
        worker.client_secret,
        undefined,
        {
          execute: [oidc.allowInsecureRequests],
        },
      );
      hook.mode = { status: 500 };
      const from = hook.calls.length;
      const tokens = await oidc.clientCredentialsGrant(rp, { scope: 'read:notes', resource: NOTES });
      assert.equal(jwtPayload(tokens.access_token).plan, undefined);
      assert.equal(hook.calls.length, from, 'the hook was not called');
      hook.mode = 'example';
    });
  });
}
