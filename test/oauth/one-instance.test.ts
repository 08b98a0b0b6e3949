import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * second-authorization-server: a version of the oauth module's `start` state had `auth`'s discovery
 * documents build an oidc-provider instance of their own beside the oauth module's (two cookie
 * keys' readers, two builds at each key change, two sets of in-memory state). Now the discovery
 * documents reach the oauth module's one instance through its offer (src/kernel/module-names.ts,
 * `ModuleOffers`). The library's instances are counted where each is made ready to serve: every
 * built instance hands its request handler out once (`callback()`).
 */
const served = new Set<object>();
const callback = Provider.prototype.callback;
Provider.prototype.callback = function (this: Provider, ...args: Parameters<typeof callback>) {
  served.add(this);
  return callback.apply(this, args);
};

for (const dialect of DIALECTS) {
  describe(`one authorization server per app (${dialect})`, () => {
    const apps: TestApp[] = [];
    after(async () => {
      for (const t of apps) await t.destroy();
    });

    it('discovery, the protocol endpoints and the registration-token API share one oidc-provider instance', async () => {
      served.clear();
      const t = await buildTestApp(dialect, {
        env: { API_FORM: 'full', OAUTH_DYNAMIC_REGISTRATION: 'token' },
      });
      apps.push(t);
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const res = await t.app.inject({ url: path });
        assert.equal(res.statusCode, 200, path);
        // The library's document (it advertises the authorization endpoint), not Gatehouse's own.
        assert.equal(json(res).authorization_endpoint, `${t.ctx.config.publicUrl}/oauth2/authorize`);
      }
      const authorize = await t.app.inject({ url: '/oauth2/authorize?client_id=nobody' });
      assert.equal(authorize.statusCode, 400, authorize.body);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      });
      const access = json<{ access_token: string }>(login).access_token;
      const token = await t.app.inject({
        method: 'POST',
        url: '/api/v1/clients/registration-tokens',
        headers: { authorization: `Bearer ${access}` },
        payload: {},
      });
      assert.equal(token.statusCode, 201, token.body);
      assert.equal(served.size, 1, 'one instance served every request of this app');
    });
  });
}
