import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hash as argon2Hash } from '@node-rs/argon2';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

const PASSWORD = 'a long and unusual passphrase 7';

interface Problem {
  code: string;
  status: number;
  title: string;
  type: string;
  detail?: string;
  request_id: string;
}

/** A problem body without its per-request id, for comparing two refusals. */
function withoutRequestId(body: Problem): Omit<Problem, 'request_id'> {
  const { request_id: _id, ...rest } = body;
  return rest;
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v1/login [${dialect}]`, () => {
    let t: TestApp;
    // Each case logs in from its own address so the per-address budget never interferes.
    let address = 0;
    const login = (email: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email, password },
        remoteAddress: `10.1.0.${++address}`,
      });

    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('returns the token response and records last_login_at', async () => {
      const user = await createUser(t, { password: PASSWORD, name: 'Ada' });
      const res = await login(user.email, PASSWORD);
      assert.equal(res.statusCode, 200);
      const body = json<{
        access_token: string;
        token_type: string;
        expires_in: number;
        refresh_token: string;
        refresh_expires_in: number;
        user: Record<string, unknown>;
      }>(res);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 900);
      assert.equal(body.refresh_expires_in, 2_592_000);
      assert.match(body.refresh_token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(body.user.id, user.id);
      assert.equal(body.user.email, user.email);
      assert.equal(typeof body.user.last_login_at, 'string');
      assert.equal('password_hash' in body.user, false);

      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(new Date(row.last_login_at ?? 0).toISOString(), body.user.last_login_at);
      assert.equal(row.updated_at, user.updated_at, 'a login is use, not a change: updated_at stays');

      const verify = await t.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${body.access_token}` },
      });
      assert.equal(verify.statusCode, 200);
    });

    it('compares emails case-insensitively and trimmed', async () => {
      const res = await login(`  ${ADMIN_EMAIL.toUpperCase()} `, ADMIN_PASSWORD);
      assert.equal(res.statusCode, 200);
      assert.equal(json<{ user: { email: string } }>(res).user.email, ADMIN_EMAIL);
    });

    it('gives an unknown email and a wrong password the same 401 body, spending a dummy hash on the unknown one', async () => {
      const user = await createUser(t, { password: PASSWORD });
      const before = t.ctx.passwords.stats().dummyVerifications;
      const unknown = await login('nobody-here@example.com', PASSWORD);
      const afterUnknown = t.ctx.passwords.stats().dummyVerifications;
      const wrong = await login(user.email, `${PASSWORD}x`);
      const afterWrong = t.ctx.passwords.stats().dummyVerifications;

      assert.equal(unknown.statusCode, 401);
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(withoutRequestId(json<Problem>(unknown)), withoutRequestId(json<Problem>(wrong)));
      assert.equal(json<Problem>(unknown).code, 'invalid_credentials');
      assert.equal(unknown.headers['content-type'], wrong.headers['content-type']);
      assert.equal(afterUnknown, before + 1, 'the unknown email took the dummy-hash path');
      assert.equal(afterWrong, afterUnknown, 'a wrong password verifies against the real hash');
    });

    it('treats a malformed email like an unknown one (dummy hash, same 401)', async () => {
      const before = t.ctx.passwords.stats().dummyVerifications;
      const res = await login('not an email', PASSWORD);
      assert.equal(res.statusCode, 401);
      assert.equal(json<Problem>(res).code, 'invalid_credentials');
      assert.equal(t.ctx.passwords.stats().dummyVerifications, before + 1);
    });

    it('refuses users without a password and invited users with the same 401 after a dummy hash', async () => {
      const noPassword = await createUser(t);
      const invited = await createUser(t, { status: 'invited', password: PASSWORD });
      for (const user of [noPassword, invited]) {
        const before = t.ctx.passwords.stats().dummyVerifications;
        const res = await login(user.email, PASSWORD);
        assert.equal(res.statusCode, 401, user.status);
        assert.equal(json<Problem>(res).code, 'invalid_credentials');
        assert.equal(t.ctx.passwords.stats().dummyVerifications, before + 1);
      }
    });

    it('says account_disabled only to someone who knows the password', async () => {
      const user = await createUser(t, { status: 'disabled', password: PASSWORD });
      const wrong = await login(user.email, `${PASSWORD}x`);
      assert.equal(wrong.statusCode, 401);
      assert.equal(json<Problem>(wrong).code, 'invalid_credentials');
      const right = await login(user.email, PASSWORD);
      assert.equal(right.statusCode, 403);
      assert.equal(json<Problem>(right).code, 'account_disabled');
      const sessions = await t.ctx.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(sessions.length, 0);
    });

    it('refuses a password over 256 characters as malformed, without hashing it', async () => {
      const before = t.ctx.passwords.stats();
      const res = await login('nobody-here@example.com', 'x'.repeat(257));
      assert.equal(res.statusCode, 400);
      assert.equal(json<Problem>(res).code, 'validation_failed');
      assert.equal(t.ctx.passwords.stats().dummyVerifications, before.dummyVerifications);
      const counters = await t.ctx.db.selectFrom('throttle_counters').select('key').execute();
      assert.equal(counters.filter((c) => c.key.endsWith(`10.1.0.${address}`)).length, 0);
    });

    it('accepts a password of exactly 256 characters', async () => {
      const long = 'ü'.repeat(256);
      const user = await createUser(t, { password: long });
      assert.equal((await login(user.email, long)).statusCode, 200);
    });

    it('refuses unknown fields and missing ones with 400', async () => {
      const extra = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, remember: true },
      });
      assert.equal(extra.statusCode, 400);
      const missing = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: ADMIN_EMAIL },
      });
      assert.equal(missing.statusCode, 400);
      assert.equal(json<Problem>(missing).code, 'validation_failed');
    });

    it('re-hashes a password stored with other argon2 parameters on the next login', async () => {
      const user = await createUser(t);
      // argon2id with weaker parameters (m=4096, t=1), as an older release might have stored.
      const weak = await argon2Hash(PASSWORD, {
        algorithm: 2,
        memoryCost: 4096,
        timeCost: 1,
        parallelism: 1,
      });
      await t.ctx.db.updateTable('users').set({ password_hash: weak }).where('id', '=', user.id).execute();
      assert.equal(t.ctx.passwords.needsRehash(weak), true);

      assert.equal((await login(user.email, PASSWORD)).statusCode, 200);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(row.password_hash, weak);
      assert.match(row.password_hash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      assert.equal(t.ctx.passwords.needsRehash(row.password_hash ?? ''), false);
      // The upgraded hash still holds the same password.
      assert.equal((await login(user.email, PASSWORD)).statusCode, 200);
    });

    it('leaves a current hash alone', async () => {
      const user = await createUser(t, { password: PASSWORD });
      assert.equal((await login(user.email, PASSWORD)).statusCode, 200);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.password_hash, user.password_hash);
    });
  });
}
