import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { type OauthStack, startOauthApp } from '../oauth/support.ts';
import { WEBHOOK_ENV } from './helpers.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const CALLBACK = 'https://app.example/callback';

interface GrantEvent {
  type: string;
  data: {
    user: { id: string; email: string };
    actor: { type: string; id: string | null };
    client: { client_id: string; name: string };
  };
}

interface SessionEvent {
  type: string;
  data: {
    actor: { type: string; id: string | null };
    session: { id: string; client: { client_id: string; name: string } | null };
  };
}

/**
 * docs/api.md §19: `oauth.grant.created` when a person allows an application on the consent step,
 * `oauth.grant.revoked` when they revoke it (DELETE /api/v1/grants/<client_id>); each reaches a real
 * receiver, verified with `standardwebhooks`, and names the client.
 */
for (const dialect of DIALECTS) {
  describe(`webhook events of the authorization server [${dialect}]`, () => {
    let stack: OauthStack;
    let rx: Receiver;
    let token: string;
    let userId: string;
    let client: { client_id: string; client_secret: string };
    const jar = new Map<string, string>();

    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(new URL(url, stack.origin), {
        method,
        redirect: 'manual',
        headers: {
          authorization: `Bearer ${token}`,
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        const name = pair.slice(0, at).trim();
        const value = pair.slice(at + 1);
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
        else jar.set(name, value);
      }
      return res;
    };
    const received = (type: string) => rx.received.filter((r) => r.type === type);

    before(async () => {
      rx = await startReceiver();
      stack = await startOauthApp(dialect, WEBHOOK_ENV);
      const hook = await stack.admin('POST', '/api/v1/webhooks', {
        url: rx.url,
        events: ['oauth.grant.created', 'oauth.grant.revoked', 'session.created', 'session.revoked'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      rx.secrets = [String(hook.body.secret)];
      const made = await stack.admin('POST', '/api/v1/clients', {
        name: 'Webhook App',
        redirect_uris: [CALLBACK],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      client = made.body as unknown as typeof client;
      const login = await fetch(`${stack.origin}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
      });
      const session = (await login.json()) as { access_token: string; user: { id: string } };
      token = session.access_token;
      userId = session.user.id;
    });
    after(async () => {
      await stack?.close();
      await rx?.close();
    });

    const relyingParty = (c = client) =>
      oidc.discovery(new URL(stack.origin), c.client_id, c.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
    const authRequest = async (config: oidc.Configuration) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      return { url, verifier, state };
    };

    it('consenting emits oauth.grant.created; revoking the app emits oauth.grant.revoked', async () => {
      const config = await relyingParty();
      const { url } = await authRequest(config);
      // The hosted page's calls, made directly: the sign-in step, then the consent step.
      const toLogin = await call('GET', url.href);
      const loginUid = /\/account\/authorize\/([^/?]+)/.exec(toLogin.headers.get('location') ?? '')?.[1];
      assert.ok(loginUid, `to the login step: ${toLogin.status} ${toLogin.headers.get('location')}`);
      const loggedIn = await call('POST', `/account/authorize/${loginUid}/login`);
      assert.equal(loggedIn.status, 200, await loggedIn.clone().text());
      const resume = ((await loggedIn.json()) as { redirect_to: string }).redirect_to;
      const toConsent = await call('GET', resume);
      const consentUid = /\/account\/authorize\/([^/?]+)/.exec(toConsent.headers.get('location') ?? '')?.[1];
      assert.ok(consentUid, `to the consent step: ${toConsent.status} ${toConsent.headers.get('location')}`);
      assert.equal(received('oauth.grant.created').length, 0, 'nothing before the consent');
      const consented = await call('POST', `/account/authorize/${consentUid}/consent`, { allow: true });
      assert.equal(consented.status, 200, await consented.clone().text());

      await rx.waitFor(() => received('oauth.grant.created').length === 1);
      const [created] = received('oauth.grant.created');
      assert.deepEqual(created?.verifiedBy, [0], 'standardwebhooks verifies the delivery');
      const createdBody = created?.body as unknown as GrantEvent;
      assert.equal(createdBody.data.user.id, userId);
      assert.deepEqual(createdBody.data.actor, { type: 'user', id: userId });
      assert.deepEqual(createdBody.data.client, { client_id: client.client_id, name: 'Webhook App' });
      assert.doesNotMatch(JSON.stringify(createdBody), /secret|token/i);

      const revoked = await call('DELETE', `/api/v1/grants/${client.client_id}`);
      assert.equal(revoked.status, 204);
      await rx.waitFor(() => received('oauth.grant.revoked').length === 1);
      const [gone] = received('oauth.grant.revoked');
      assert.deepEqual(gone?.verifiedBy, [0], 'standardwebhooks verifies the delivery');
      assert.notEqual(gone?.id, created?.id);
      const goneBody = gone?.body as unknown as GrantEvent;
      assert.equal(goneBody.data.user.id, userId);
      assert.deepEqual(goneBody.data.actor, { type: 'user', id: userId });
      assert.deepEqual(goneBody.data.client, { client_id: client.client_id, name: 'Webhook App' });
      // A second revocation changes nothing and writes no event to the outbox.
      assert.equal((await call('DELETE', `/api/v1/grants/${client.client_id}`)).status, 404);
      const outbox = await stack.t.ctx.db
        .selectFrom('webhook_events')
        .select('type')
        .where('type', 'like', 'oauth.grant.%')
        .execute();
      assert.deepEqual(outbox.map((e) => e.type).sort(), ['oauth.grant.created', 'oauth.grant.revoked']);
    });

    it('session-created-event-names-no-client: the grant’s session.created names its client', async () => {
      const app = { client_id: client.client_id, name: 'Webhook App' };
      const opened = received('session.created').filter(
        (r) => (r.body as unknown as SessionEvent).data.session.client !== null,
      );
      assert.equal(opened.length, 1, 'the consent above opened one app session');
      assert.deepEqual(
        opened.map((r) => (r.body as unknown as SessionEvent).data.session.client),
        [app],
      );
    });

    it('oauth-revocation-emits-no-session-revoked: RFC 7009 ends the grant’s session with one event', async () => {
      // First-party with the refresh_token grant: a refresh token, whose revocation ends the grant.
      const made = await stack.admin('POST', '/api/v1/clients', {
        name: 'Webhook Tool',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        first_party: true,
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const tool = made.body as unknown as typeof client;
      const config = await relyingParty(tool);
      const r = await authRequest(config);
      let res = await call('GET', r.url.href);
      for (let hop = 0; hop < 6 && !(res.headers.get('location') ?? '').startsWith(CALLBACK); hop += 1) {
        const location = res.headers.get('location') ?? '';
        const uid = /\/account\/authorize\/([^/?]+)$/.exec(new URL(location, stack.origin).pathname)?.[1];
        if (uid === undefined) {
          res = await call('GET', location);
          continue;
        }
        const step = (
          (await (await call('GET', `/account/authorize/${uid}/details`)).json()) as { prompt: string }
        ).prompt;
        const done = await call(
          'POST',
          `/account/authorize/${uid}/${step}`,
          step === 'consent' ? { allow: true } : {},
        );
        assert.equal(done.status, 200, await done.clone().text());
        res = await call('GET', ((await done.json()) as { redirect_to: string }).redirect_to);
      }
      const tokens = await oidc.authorizationCodeGrant(config, new URL(res.headers.get('location') ?? ''), {
        pkceCodeVerifier: r.verifier,
        expectedState: r.state,
      });
      const toolSession = () =>
        received('session.created')
          .map((x) => (x.body as unknown as SessionEvent).data.session)
          .find((x) => x.client?.client_id === tool.client_id);
      await rx.waitFor(() => toolSession() !== undefined);
      const sessionId = String(toolSession()?.id);
      const before = received('session.revoked').length;
      assert.ok(tokens.refresh_token);
      await oidc.tokenRevocation(config, tokens.refresh_token);
      await rx.waitFor(() => received('session.revoked').length > before);
      const revoked = received('session.revoked')
        .slice(before)
        .map((x) => x.body as unknown as SessionEvent);
      assert.deepEqual(
        revoked.map((e) => e.data.session),
        [{ id: sessionId, client: { client_id: tool.client_id, name: 'Webhook Tool' } }],
      );
      assert.deepEqual(revoked[0]?.data.actor, { type: 'system', id: null });
      const audited = await stack.t.ctx.db
        .selectFrom('audit_log')
        .select('action')
        .where('target_id', '=', sessionId)
        .where('action', '=', 'session.revoke')
        .execute();
      assert.equal(audited.length, 1, 'one audit entry');
    });
  });
}
