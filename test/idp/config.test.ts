import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, postVerify, problem, signInThroughIdp } from '../helpers/idp.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  end_session_endpoint?: string;
  jwks_uri: string;
  scopes_supported: string[];
}

interface HealthBody {
  checks: Record<string, { status: string; keys?: number }>;
}

for (const dialect of DIALECTS) {
  describe(`idp configuration and settings [${dialect}]`, () => {
    let op: OidcHarness;
    const apps: TestApp[] = [];
    const app = async (env: Record<string, string>) => {
      const t = await buildTestApp(dialect, { env });
      apps.push(t);
      return t;
    };

    before(async () => {
      op = await startOidcProvider();
    });
    after(async () => {
      for (const t of apps) await t.destroy();
      await op?.stop();
    });

    it('without a provider: config says disabled, verify answers 503 idp_not_configured, health disabled', async () => {
      const t = await app({});
      const config = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(config.statusCode, 200);
      assert.deepEqual(json(config), { enabled: false });
      const { idToken, nonce } = await op.signIn('alice');
      const res = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(res.statusCode, 503);
      assert.equal(problem(res).code, 'idp_not_configured');
      const healthRes = await t.app.inject({ url: '/health/detailed' });
      assert.equal(healthRes.statusCode, 200);
      assert.deepEqual(json<HealthBody>(healthRes).checks.idp, { status: 'disabled' });
      // Form A lists the idp group in the index either way.
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      assert.deepEqual(index.documentation.idp, {
        config: 'GET /api/v1/idp/config',
        verify: 'POST /api/v1/idp/verify',
      });
    });

    it("with a provider: config mirrors the provider's discovery document, health counts its keys", async () => {
      const t = await app(idpEnv(op));
      const discovery = (await (await fetch(op.discoveryUrl)).json()) as DiscoveryDocument;
      const res = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), {
        enabled: true,
        issuer: op.issuer,
        client_id: op.clientId,
        authorization_endpoint: discovery.authorization_endpoint,
        token_endpoint: discovery.token_endpoint,
        end_session_endpoint: discovery.end_session_endpoint ?? null,
        jwks_uri: discovery.jwks_uri,
        scopes_supported: discovery.scopes_supported,
      });
      const healthRes = await t.app.inject({ url: '/health/detailed' });
      assert.equal(healthRes.statusCode, 200, healthRes.body);
      const idp = json<HealthBody>(healthRes).checks.idp;
      assert.equal(idp?.status, 'ok');
      assert.equal(idp?.keys, (await op.jwks()).keys.length);

      // An admin switching the module off takes the check out of the health verdict too.
      const headers = await authHeaders(t, await firstAdmin(t));
      const off = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/idp',
        headers,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const disabled = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(disabled.statusCode, 404);
      assert.equal(problem(disabled).code, 'module_disabled');
      const healthOff = json<HealthBody>(await t.app.inject({ url: '/health/detailed' }));
      assert.deepEqual(healthOff.checks.idp, { status: 'disabled' });
    });

    it('refuses a provider whose discovery document names another issuer (exact match)', async () => {
      // Same server, but the configured issuer has a trailing slash the provider's `issuer` lacks.
      const t = await app(idpEnv(op, { OIDC_ISSUER: `${op.issuer}/` }));
      const res = await t.app.inject({ url: '/api/v1/idp/config' });
      assert.equal(res.statusCode, 503);
      assert.equal(problem(res).code, 'idp_unavailable');
      const { idToken, nonce } = await op.signIn('alice');
      const verify = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(verify.statusCode, 503);
    });

    it('with auto-provisioning off: an unknown identity gets 403, a verified email still links', async () => {
      const t = await app(idpEnv(op, { OIDC_AUTO_PROVISION: 'false' }));
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(problem(res).code, 'forbidden');
      assert.deepEqual(await countFor(t, 'alice@example.com', 'alice'), { users: 0, identities: 0 });

      const existing = await createUser(t, { email: 'alice@example.com' });
      const linked = await signInThroughIdp(t, op, 'alice');
      assert.equal(linked.statusCode, 200, linked.body);
      assert.equal(json<{ user: { id: string } }>(linked).user.id, existing.id);
    });

    it('with linking by email off: a verified email of an existing account is 409 identity_link_required, new ones provision', async () => {
      const t = await app(idpEnv(op, { OIDC_LINK_BY_EMAIL: 'false' }));
      await createUser(t, { email: 'alice@example.com' });
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 409, res.body);
      // docs/api.md §16: `identity_link_required` replaces `email_taken` for a refused link.
      assert.equal(problem(res).code, 'identity_link_required');
      assert.deepEqual(await countFor(t, 'alice@example.com', 'alice'), { users: 1, identities: 0 });

      op.setAccount('gina', { email: 'gina@example.com', email_verified: true });
      const fresh = await signInThroughIdp(t, op, 'gina');
      assert.equal(fresh.statusCode, 200, fresh.body);
      assert.equal(json<{ created: boolean }>(fresh).created, true);
    });

    it('refuses algorithms outside OIDC_ALLOWED_ALGS even when the provider signs with them', async () => {
      const t = await app(idpEnv(op, { OIDC_ALLOWED_ALGS: 'ES256' }));
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 401, res.body);
      assert.match(problem(res).detail ?? '', /\(alg\)/);
    });
  });
}
