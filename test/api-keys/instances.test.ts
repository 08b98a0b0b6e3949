import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { FULL, keyHeaders, makeKey } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`api keys: two instances on one database, and the dump [${dialect}]`, () => {
    let a: TestApp;
    let b: TestApp;
    let admin: Record<string, string>;
    before(async () => {
      a = await buildTestApp(dialect, { env: FULL });
      b = await a.restart();
      admin = await authHeaders(a, await firstAdmin(a));
    });
    after(async () => {
      await b.close();
      await a.destroy();
    });

    it('the rate limit is exact across instances: 100 parallel verifications split over two', async () => {
      const { key } = await makeKey(a, admin, { rate_limit: { requests: 41, window_s: 3600 } });
      const answers = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const t = i % 2 === 0 ? a : b;
          const res = await t.app.inject({
            method: 'POST',
            url: '/api/v1/api-keys/verify',
            headers: admin,
            payload: { key },
          });
          return json<{ valid: boolean; reason?: string }>(res);
        }),
      );
      assert.equal(answers.filter((x) => x.valid).length, 41);
      assert.equal(answers.filter((x) => x.reason === 'rate_limited').length, 59);
    });

    it('a revocation on one instance is refused by the other on its next request', async () => {
      for (let i = 0; i < 10; i++) {
        const k = await makeKey(a, admin, { scopes: ['users:read'] });
        assert.equal(
          (await b.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(k.key) }))
            .statusCode,
          200,
        );
        assert.equal(
          (await a.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${k.id}`, headers: admin }))
            .statusCode,
          204,
        );
        const after = await b.app.inject({ method: 'GET', url: '/api/v1/users', headers: keyHeaders(k.key) });
        assert.equal(after.statusCode, 401, 'no cache holds a revoked key');
      }
    });

    it('a dump of the database holds no key in any encoding (raw, base64, base64url, hex)', async () => {
      const keys = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          makeKey(a, admin, { name: `dump ${i}`, rate_limit: { requests: 5, window_s: 60 } }),
        ),
      );
      for (const k of keys) {
        await a.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys/verify',
          headers: admin,
          payload: { key: k.key },
        });
        await a.app.inject({ method: 'GET', url: '/api/v1/profile', headers: keyHeaders(k.key) });
      }
      let dump = '';
      for (const table of await a.ctx.db.introspection.getTables()) {
        const rows = await a.ctx.db
          .selectFrom(table.name as never)
          .selectAll()
          .execute();
        dump += `${JSON.stringify(rows)}\n`;
      }
      const lower = dump.toLowerCase();
      for (const { key } of keys) {
        const raw = Buffer.from(key);
        // The secret part alone too: a store that dropped the fixed prefix would still leak it.
        const secret = key.slice('gate_'.length);
        for (const form of [
          key,
          secret,
          raw.toString('base64'),
          raw.toString('base64url'),
          Buffer.from(secret).toString('base64'),
        ]) {
          assert.equal(dump.includes(form), false, 'the key is in the dump');
        }
        assert.equal(lower.includes(raw.toString('hex')), false, 'the key is in the dump as hex');
      }
    });
  });
}
