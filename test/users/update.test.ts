import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

const GOOD_PASSWORD = 'violet lantern orbit 7391';

for (const dialect of DIALECTS) {
  describe(`users update [${dialect}]`, () => {
    let t: TestApp;
    let root: UserRow;
    let rootH: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect);
      root = await firstAdmin(t);
      rootH = await authHeaders(t, root);
    });
    after(() => t.destroy());

    const put = (id: string, payload: object, headers = rootH) =>
      t.app.inject({ method: 'PUT', url: `/api/v1/users/${id}`, headers, payload });
    const row = (id: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const verify = (token: string) =>
      t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } });

    it('an admin changes name, email (normalised, unverified again), role and status', async () => {
      const u = await createUser(t, { email: 'carol@example.com', name: 'Carol' });
      const res = await put(u.id, { name: 'Carol Danvers', email: '  Carol.D@Example.COM ', role: 'admin' });
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.equal(body.name, 'Carol Danvers');
      assert.equal(body.email, 'carol.d@example.com');
      assert.equal(body.email_verified, false);
      assert.equal(body.role, 'admin');
      assert.ok(Date.parse(String(body.updated_at)) >= u.updated_at);
      assert.equal((await row(u.id)).email, 'carol.d@example.com');
      const disabled = await put(u.id, { status: 'disabled' });
      assert.equal(json(disabled).status, 'disabled');
      assert.equal(json(await put(u.id, { status: 'active', role: 'user' })).status, 'active');
    });

    it('an invalid email is 400, a taken one (in any case) 409 email_taken', async () => {
      const u = await createUser(t, { email: 'dave@example.com' });
      await createUser(t, { email: 'erin@example.com' });
      for (const email of ['not an email', 'dave@', '@example.com', 'dåve@example.com']) {
        const res = await put(u.id, { email });
        assert.equal(res.statusCode, 400, email);
        assert.equal(json(res).code, 'validation_failed');
      }
      const taken = await put(u.id, { email: 'ERIN@example.com' });
      assert.equal(taken.statusCode, 409);
      assert.equal(json(taken).code, 'email_taken');
      assert.equal((await row(u.id)).email, 'dave@example.com');
      // Setting one's own current email is no conflict.
      assert.equal((await put(u.id, { email: 'Dave@Example.com' })).statusCode, 200);
    });

    it('a new password follows the policy (422 weak_password) and is stored hashed', async () => {
      const u = await createUser(t, { email: 'frank.sinatra@example.com' });
      for (const password of ['short', 'x'.repeat(257), '1qaz2wsx3edc4rfv', 'my frank.sinatra secret 42']) {
        const res = await put(u.id, { password });
        assert.equal(res.statusCode, 422, password.slice(0, 20));
        assert.equal(json(res).code, 'weak_password');
      }
      const ok = await put(u.id, { password: GOOD_PASSWORD });
      assert.equal(ok.statusCode, 200);
      assert.equal(json(ok).password_hash, undefined);
      const stored = await row(u.id);
      assert.ok(stored.password_hash?.startsWith('$argon2id$'));
      assert.ok(await t.ctx.passwords.verify(stored.password_hash!, GOOD_PASSWORD));
    });

    it('disabling revokes every session at once; enabling again does not bring them back', async () => {
      const u = await createUser(t, { email: 'gina@example.com' });
      const s1 = await sessionFor(t, u);
      const s2 = await sessionFor(t, u);
      assert.equal((await verify(s1.access_token)).statusCode, 200);
      assert.equal((await put(u.id, { status: 'disabled' })).statusCode, 200);
      for (const s of [s1, s2]) {
        const res = await verify(s.access_token);
        assert.equal(res.statusCode, 401);
        assert.equal(json(res).code, 'session_revoked');
      }
      const sessions = await t.ctx.db
        .selectFrom('sessions')
        .selectAll()
        .where('user_id', '=', u.id)
        .execute();
      assert.ok(sessions.every((s) => s.revoked_at !== null));
      assert.equal((await put(u.id, { status: 'active' })).statusCode, 200);
      assert.equal((await verify(s1.access_token)).statusCode, 401);
    });

    it('a password set by an admin revokes the user’s sessions; a name change does not', async () => {
      const u = await createUser(t, { email: 'hank@example.com' });
      const s = await sessionFor(t, u);
      assert.equal((await put(u.id, { name: 'Hank' })).statusCode, 200);
      assert.equal((await verify(s.access_token)).statusCode, 200);
      assert.equal((await put(u.id, { password: GOOD_PASSWORD })).statusCode, 200);
      assert.equal((await verify(s.access_token)).statusCode, 401);
    });

    it('the last active admin cannot be demoted or disabled (409 last_admin)', async () => {
      for (const payload of [
        { role: 'user' },
        { status: 'disabled' },
        { role: 'user', status: 'disabled' },
      ]) {
        const res = await put(root.id, payload);
        assert.equal(res.statusCode, 409, JSON.stringify(payload));
        assert.equal(json(res).code, 'last_admin');
      }
      assert.equal((await row(root.id)).role, 'admin');
      // A disabled admin does not count as another admin.
      await createUser(t, { email: 'sleeping-admin@example.com', role: 'admin', status: 'disabled' });
      assert.equal((await put(root.id, { role: 'user' })).statusCode, 409);
      // With a second active admin the first may step down, and the second is then the last.
      const ivy = await createUser(t, { email: 'ivy@example.com', role: 'admin' });
      const ivyH = await authHeaders(t, ivy);
      assert.equal((await put(root.id, { role: 'user' }, ivyH)).statusCode, 200);
      const self = await put(ivy.id, { status: 'disabled' }, ivyH);
      assert.equal(self.statusCode, 409);
      assert.equal(json(self).code, 'last_admin');
      // Other changes to the last admin are fine.
      assert.equal((await put(ivy.id, { name: 'Ivy' }, ivyH)).statusCode, 200);
      assert.equal((await put(root.id, { role: 'admin' }, ivyH)).statusCode, 200);
    });

    it('two admins demoting each other at once: exactly one succeeds, one active admin remains', async () => {
      for (let round = 0; round < 4; round++) {
        // Only a and b are active admins for this round.
        await t.ctx.db
          .updateTable('users')
          .set({ status: 'disabled' })
          .where('role', '=', 'admin')
          .where('status', '=', 'active')
          .execute();
        const a = await createUser(t, { email: `race-a${round}@example.com`, role: 'admin' });
        const b = await createUser(t, { email: `race-b${round}@example.com`, role: 'admin' });
        const [aH, bH] = [await authHeaders(t, a), await authHeaders(t, b)];
        const change = round % 2 === 0 ? { role: 'user' } : { status: 'disabled' };
        const results = await Promise.all([put(b.id, change, aH), put(a.id, change, bH)]);
        const codes = results.map((r) => r.statusCode).sort();
        assert.equal(codes.filter((c) => c === 200).length, 1, `round ${round}: ${codes}`);
        // The loser either lost the race in the transaction (409) or was no longer an admin (403/401).
        assert.ok(
          codes.some((c) => c === 409 || c === 403 || c === 401),
          `round ${round}: ${codes}`,
        );
        const active = await t.ctx.db
          .selectFrom('users')
          .select('id')
          .where('role', '=', 'admin')
          .where('status', '=', 'active')
          .execute();
        assert.equal(active.length, 1);
      }
      // Leave root as the active admin for the tests after this one.
      await t.ctx.db
        .updateTable('users')
        .set({ status: 'active', role: 'admin' })
        .where('id', '=', root.id)
        .execute();
    });
  });
}
