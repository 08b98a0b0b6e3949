import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashKey, KEY_REGEX, newKey, wellFormedKey } from '../../src/modules/api-keys/key-format.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { FULL, makeKey, problemCode, rowCount } from './helpers.ts';

describe('api keys: the format (pure)', () => {
  it('matches the one documented regex, carries a checksum, and refuses a one-character typo', () => {
    for (let i = 0; i < 200; i++) {
      const key = newKey();
      assert.match(key, KEY_REGEX);
      assert.equal(wellFormedKey(key), true);
      // Every single-character change is caught by the checksum (CRC-32 catches all of them).
      const pos = 5 + (i % 38);
      const c = key[pos] === 'a' ? 'b' : 'a';
      assert.equal(wellFormedKey(key.slice(0, pos) + c + key.slice(pos + 1)), false);
    }
    assert.equal(wellFormedKey(`gate_${'A'.repeat(38)}`), false, 'an invented key fails its checksum');
    assert.equal(wellFormedKey('gate_short'), false);
    assert.notEqual(hashKey(newKey()), hashKey(newKey()));
  });
});

for (const dialect of DIALECTS) {
  describe(`api keys: management [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    let person: Awaited<ReturnType<typeof createUser>>;
    let personHeaders: Record<string, string>;
    before(async () => {
      t = await buildTestApp(dialect, { env: FULL });
      admin = await authHeaders(t, await firstAdmin(t));
      person = await createUser(t, { email: 'ada@keys.test', name: 'Ada' });
      personHeaders = await authHeaders(t, person);
    });
    after(() => t.destroy());

    it('a person creates a key for themself: shown once, stored as a hash, prefix of 12', async () => {
      const created = await makeKey(t, personHeaders, { scopes: ['users:read'] });
      assert.match(created.key, KEY_REGEX);
      assert.equal(created.prefix, created.key.slice(0, 12));
      assert.deepEqual(created.owner, { type: 'user', id: person.id });
      assert.deepEqual(created.created_by, { id: person.id });
      assert.deepEqual(created.scopes, ['users:read']);
      assert.ok(typeof created.expires_at === 'string', 'an omitted expiry is the maximum, never null');
      const got = await t.app.inject({
        method: 'GET',
        url: `/api/v1/api-keys/${created.id}`,
        headers: personHeaders,
      });
      assert.equal(got.statusCode, 200);
      assert.equal(json(got).key, undefined, 'the secret is in the create answer only');
      const row = await t.ctx.db
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.key_hash, hashKey(created.key));
    });

    it('every bad input is a problem+json and stores nothing', async () => {
      const before = await rowCount(t, 'api_keys');
      const far = new Date(Date.now() + 366 * 86_400_000).toISOString();
      const past = new Date(Date.now() - 1000).toISOString();
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ name: 'x', scopes: ['users:reed'] }, 400, 'validation_failed'],
        [{ name: 'x', scopes: ['nosuchgroup:read'] }, 400, 'validation_failed'],
        [{ name: 'x', scopes: [] }, 400, 'validation_failed'],
        [{ name: 'x', expires_at: far }, 400, 'validation_failed'],
        [{ name: 'x', expires_at: past }, 400, 'validation_failed'],
        [{ name: 'x', expires_at: null }, 400, 'validation_failed'],
        [{ name: 'x', rate_limit: { requests: 0, window_s: 10 } }, 400, 'validation_failed'],
        [{ name: 'x', rate_limit: { requests: 1, window_s: 86_401 } }, 400, 'validation_failed'],
        [{ name: 'x', user_id: '01900000-0000-7000-8000-000000000000' }, 403, 'forbidden'],
        [{ name: 'x', scopes: ['api_keys:verify'] }, 403, 'forbidden'],
        [{ name: 'x', extra: 1 }, 400, 'validation_failed'],
        [{}, 400, 'validation_failed'],
      ];
      for (const [payload, status, code] of cases) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/api-keys',
          headers: personHeaders,
          payload,
        });
        assert.equal(res.statusCode, status, JSON.stringify(payload));
        assert.equal(problemCode(res), code, JSON.stringify(payload));
      }
      const foreign = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: admin,
        payload: { name: 'x', user_id: '01900000-0000-7000-8000-000000000000' },
      });
      assert.equal(foreign.statusCode, 404);
      assert.equal(problemCode(foreign), 'not_found');
      assert.equal(await rowCount(t, 'api_keys'), before, 'nothing stored');
    });

    it('a foreign or revoked key answers 404 api_key_not_found on get and delete', async () => {
      const mine = await makeKey(t, admin);
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await t.app.inject({
          method,
          url: `/api/v1/api-keys/${mine.id}`,
          headers: personHeaders,
        });
        assert.equal(res.statusCode, 404);
        assert.equal(problemCode(res), 'api_key_not_found');
      }
      const del = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/api-keys/${mine.id}`,
        headers: admin,
      });
      assert.equal(del.statusCode, 204);
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await t.app.inject({ method, url: `/api/v1/api-keys/${mine.id}`, headers: admin });
        assert.equal(problemCode(res), 'api_key_not_found');
      }
      const junk = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys/nope', headers: admin });
      assert.equal(problemCode(junk), 'api_key_not_found');
    });

    it('lists: a person sees their own, keyset-paged; ?owner= is for admins', async () => {
      const other = await createUser(t, { email: 'bob@keys.test' });
      const otherHeaders = await authHeaders(t, other);
      for (let i = 0; i < 5; i++) await makeKey(t, otherHeaders, { name: `k${i}` });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/v1/api-keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page = json<{ data: Array<{ id: string; owner: { id: string } }>; next_cursor: string | null }>(
          await t.app.inject({ method: 'GET', url, headers: otherHeaders }),
        );
        for (const k of page.data) {
          assert.equal(k.owner.id, other.id);
          seen.push(k.id);
        }
        cursor = page.next_cursor;
      } while (cursor);
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen).size, 5);
      const forbidden = await t.app.inject({
        method: 'GET',
        url: `/api/v1/api-keys?owner=user:${person.id}`,
        headers: otherHeaders,
      });
      assert.equal(forbidden.statusCode, 403);
      const byAdmin = json<{ data: unknown[] }>(
        await t.app.inject({ method: 'GET', url: `/api/v1/api-keys?owner=user:${other.id}`, headers: admin }),
      );
      assert.equal(byAdmin.data.length, 5);
      const bad = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys?cursor=zzz', headers: admin });
      assert.equal(problemCode(bad), 'validation_failed');
    });

    it('at most 100 live keys per owner: 409 key_limit, nothing stored, exact under parallel creates at the edge', async () => {
      const u = await createUser(t, { email: 'many@keys.test' });
      const h = await authHeaders(t, u);
      for (let i = 0; i < 94; i++) await makeKey(t, h, { name: `k${i}` });
      // An expired key is not live: it does not count against the limit.
      const old = await makeKey(t, h, { name: 'expired' });
      await t.ctx.db
        .updateTable('api_keys')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', old.id)
        .execute();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: h, payload: { name: `p${i}` } }),
        ),
      );
      assert.equal(answers.filter((r) => r.statusCode === 201).length, 6);
      assert.equal(answers.filter((r) => r.statusCode === 409).length, 6);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: h,
        payload: { name: 'one too many' },
      });
      assert.equal(res.statusCode, 409);
      assert.equal(problemCode(res), 'key_limit');
      const n = await t.ctx.db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('owner_id', '=', u.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(n.n), 101, '100 live and the expired one');
    });
  });
}
