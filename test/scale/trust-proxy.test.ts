import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

// Behind a load balancer the client address (throttling, audit) comes from X-Forwarded-For. A
// proxy that appends to the header leaves the client's own forged entries on the left, so "trust
// every hop" believes a forgery; naming the proxies believes only what they added.
const FORGED = '6.6.6.6';
const REAL_CLIENT = '203.0.113.7';
const PROXY = '10.0.0.9';

for (const dialect of DIALECTS) {
  describe(`TRUST_PROXY [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    /** The address a failed login was counted under, with the given TRUST_PROXY. */
    async function countedAddress(trustProxy: string): Promise<string> {
      const app = await t.restart({ TRUST_PROXY: trustProxy });
      try {
        await app.ctx.db.deleteFrom('throttle_counters').execute();
        const res = await app.app.inject({
          method: 'POST',
          url: '/api/v1/login',
          payload: { email: 'nobody@example.com', password: 'not the password at all' },
          remoteAddress: PROXY,
          headers: { 'x-forwarded-for': `${FORGED}, ${REAL_CLIENT}` },
        });
        assert.equal(res.statusCode, 401);
        const rows = await app.ctx.db
          .selectFrom('throttle_counters')
          .select('key')
          .where('key', 'like', 'login:addr:%')
          .execute();
        assert.equal(rows.length, 1);
        return String(rows[0]?.key).slice('login:addr:'.length);
      } finally {
        await app.close();
      }
    }

    it('false: the connection address, X-Forwarded-For ignored', async () => {
      assert.equal(await countedAddress('false'), PROXY);
    });
    it('a list of proxy ranges: the address the trusted proxy saw, forgeries ignored', async () => {
      assert.equal(await countedAddress('10.0.0.0/8, loopback'), REAL_CLIENT);
    });
    it('true: the left-most entry, forgeable when the proxy appends (documented)', async () => {
      assert.equal(await countedAddress('true'), FORGED);
    });
  });
}

describe('TRUST_PROXY configuration', () => {
  const cfg = (v: string) => loadConfig({ TRUST_PROXY: v }).trustProxy;
  it('accepts booleans and lists of addresses, CIDRs and range names', () => {
    assert.equal(cfg('true'), true);
    assert.equal(cfg('off'), false);
    assert.equal(
      cfg('10.0.0.0/8, 192.168.1.10 ,fd00::/8,loopback'),
      '10.0.0.0/8,192.168.1.10,fd00::/8,loopback',
    );
  });
  it('refuses anything else, naming the variable', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/1', '::1/129']) {
      assert.throws(
        () => cfg(bad),
        (err: Error) => err instanceof ConfigError && err.message.startsWith('TRUST_PROXY'),
        bad,
      );
    }
  });
});
