import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLoginThrottle } from '../../src/identity/budgets/throttle.ts';
import { hashOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { pruneAuthState } from '../../src/modules/auth/auth.service.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  refresh_expires_in: number;
  token_type: string;
  user: { id: string };
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v1/refresh-token [${dialect}]`, () => {
    let t: TestApp;
    const refresh = (token: string, app = t) =>
      app.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: { refresh_token: token } });
    const verify = (access: string, app = t) =>
      app.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${access}` } });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('rotates: a new pair for the same session, and the session is marked used', async () => {
      const user = await createUser(t);
      const first = await sessionFor(t, user);
      const sessionId = json<{ session_id: string }>(await verify(first.access_token)).session_id;
      await t.ctx.db.updateTable('sessions').set({ last_used_at: 1 }).where('id', '=', sessionId).execute();

      const res = await refresh(first.refresh_token);
      assert.equal(res.statusCode, 200);
      const next = json<Tokens>(res);
      assert.equal(next.token_type, 'Bearer');
      assert.equal(next.expires_in, 900);
      assert.equal(next.refresh_expires_in, 2_592_000);
      assert.equal(next.user.id, user.id);
      assert.notEqual(next.refresh_token, first.refresh_token);
      assert.notEqual(next.access_token, first.access_token);
      const verified = json<{ session_id: string }>(await verify(next.access_token));
      assert.equal(verified.session_id, sessionId);

      const session = await t.ctx.db
        .selectFrom('sessions')
        .selectAll()
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.ok(session.last_used_at > 1);

      // The successor rotates in turn.
      assert.equal((await refresh(next.refresh_token)).statusCode, 200);
    });

    it('within the grace window answers a repeat with the same pair', async () => {
      const first = await sessionFor(t, await createUser(t));
      const a = json<Tokens>(await refresh(first.refresh_token));
      const again = await refresh(first.refresh_token);
      assert.equal(again.statusCode, 200);
      const b = json<Tokens>(again);
      assert.equal(b.access_token, a.access_token);
      assert.equal(b.refresh_token, a.refresh_token);
      assert.ok(b.expires_in <= 900 && b.expires_in > 0);
    });

    it('two concurrent refreshes of one token both succeed with the same successor', async () => {
      const first = await sessionFor(t, await createUser(t));
      const results = await Promise.all(Array.from({ length: 4 }, () => refresh(first.refresh_token)));
      for (const r of results) assert.equal(r.statusCode, 200, r.body);
      const pairs = results.map((r) => json<Tokens>(r));
      for (const p of pairs) {
        assert.equal(p.refresh_token, pairs[0]?.refresh_token);
        assert.equal(p.access_token, pairs[0]?.access_token);
      }
      // Exactly one successor was created.
      const session = json<{ session_id: string }>(await verify(first.access_token)).session_id;
      const rows = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select('id')
        .where('session_id', '=', session)
        .execute();
      assert.equal(rows.length, 2);
    });

    it('after the grace window a repeat is reuse: 401 refresh_token_reused and the session revoked', async () => {
      const first = await sessionFor(t, await createUser(t));
      const next = json<Tokens>(await refresh(first.refresh_token));
      // Move the rotation back past the 10 s grace window instead of waiting.
      await t.ctx.db
        .updateTable('refresh_tokens')
        .set({ rotated_at: Date.now() - 11_000 })
        .where('token_hash', '=', hashOpaqueToken(first.refresh_token))
        .execute();

      const replay = await refresh(first.refresh_token);
      assert.equal(replay.statusCode, 401);
      assert.equal(json(replay).code, 'refresh_token_reused');

      const check = await verify(next.access_token);
      assert.equal(check.statusCode, 401);
      assert.equal(json(check).code, 'session_revoked');
      assert.match(String(check.headers['www-authenticate']), /^Bearer /);
      const successor = await refresh(next.refresh_token);
      assert.equal(successor.statusCode, 401);
      assert.equal(json(successor).code, 'refresh_token_invalid');
    });

    it('with REFRESH_REUSE_GRACE_S=0 any repeat is reuse', async () => {
      const strict = await buildTestApp(dialect, { env: { REFRESH_REUSE_GRACE_S: '0' } });
      try {
        const first = await sessionFor(strict, await createUser(strict));
        const next = json<Tokens>(await refresh(first.refresh_token, strict));
        const replay = await refresh(first.refresh_token, strict);
        assert.equal(replay.statusCode, 401);
        assert.equal(json(replay).code, 'refresh_token_reused');
        assert.equal(json(await verify(next.access_token, strict)).code, 'session_revoked');
        assert.equal(json(await verify(first.access_token, strict)).code, 'session_revoked');
      } finally {
        await strict.destroy();
      }
    });

    it('refuses unknown, expired and revoked tokens with refresh_token_invalid', async () => {
      const unknown = await refresh('A'.repeat(43));
      assert.equal(unknown.statusCode, 401);
      assert.equal(json(unknown).code, 'refresh_token_invalid');

      const expired = await sessionFor(t, await createUser(t));
      await t.ctx.db
        .updateTable('refresh_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('token_hash', '=', hashOpaqueToken(expired.refresh_token))
        .execute();
      assert.equal(json(await refresh(expired.refresh_token)).code, 'refresh_token_invalid');

      const loggedOut = await sessionFor(t, await createUser(t));
      const logout = await t.app.inject({
        method: 'POST',
        url: '/api/v1/logout',
        headers: { authorization: `Bearer ${loggedOut.access_token}` },
      });
      assert.equal(logout.statusCode, 204);
      assert.equal(json(await refresh(loggedOut.refresh_token)).code, 'refresh_token_invalid');
    });

    it("a disabled user's tokens die: refresh and verify-token both refuse", async () => {
      const user = await createUser(t);
      const tokens = await sessionFor(t, user);
      await t.ctx.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', user.id).execute();
      const r = await refresh(tokens.refresh_token);
      assert.equal(r.statusCode, 401);
      assert.equal(json(r).code, 'refresh_token_invalid');
      const v = await verify(tokens.access_token);
      assert.equal(v.statusCode, 401);
      assert.equal(json(v).code, 'session_revoked');
    });

    it('stores no usable token: hashes only, and the successor sealed', async () => {
      const first = await sessionFor(t, await createUser(t));
      const next = json<Tokens>(await refresh(first.refresh_token));
      const rows = await t.ctx.db.selectFrom('refresh_tokens').selectAll().execute();
      const dump = JSON.stringify(rows);
      for (const secret of [first.refresh_token, next.refresh_token, next.access_token]) {
        assert.equal(dump.includes(secret), false);
        assert.equal(dump.includes(Buffer.from(secret).toString('base64')), false);
      }
      const rotated = rows.find((r) => r.token_hash === hashOpaqueToken(first.refresh_token));
      assert.match(rotated?.successor_box ?? '', /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    });

    it('housekeeping deletes expired refresh tokens and keeps live ones', async () => {
      const live = await sessionFor(t, await createUser(t));
      const stale = await sessionFor(t, await createUser(t));
      await t.ctx.db
        .updateTable('refresh_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('token_hash', '=', hashOpaqueToken(stale.refresh_token))
        .execute();
      const throttle = createLoginThrottle(t.ctx.db, { failuresPerAddressPerMin: 30 });
      const pruned = await pruneAuthState(t.ctx, throttle);
      assert.ok(pruned.refreshTokens >= 1);
      const hashes = (await t.ctx.db.selectFrom('refresh_tokens').select('token_hash').execute()).map(
        (r) => r.token_hash,
      );
      assert.equal(hashes.includes(hashOpaqueToken(stale.refresh_token)), false);
      assert.equal(hashes.includes(hashOpaqueToken(live.refresh_token)), true);
      assert.equal(json(await refresh(stale.refresh_token)).code, 'refresh_token_invalid');
      assert.equal((await refresh(live.refresh_token)).statusCode, 200);
    });

    it('validates the body', async () => {
      const missing = await t.app.inject({ method: 'POST', url: '/api/v1/refresh-token', payload: {} });
      assert.equal(missing.statusCode, 400);
      assert.equal(json(missing).code, 'validation_failed');
    });
  });
}
