import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin, sessionFor } from '../helpers/users.ts';

for (const dialect of DIALECTS) {
  describe(`users create and delete [${dialect}]`, () => {
    let t: TestApp;
    let root: UserRow;
    let rootH: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect);
      root = await firstAdmin(t);
      rootH = await authHeaders(t, root);
    });
    after(() => t.destroy());

    const create = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/api/v1/users', headers: rootH, payload });
    const row = (id: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

    it('creates an active user: 201, Location, normalised email, role user by default, no password', async () => {
      const res = await create({ email: '  New.Person@Example.COM ', name: ' New Person ' });
      assert.equal(res.statusCode, 201);
      const body = json(res);
      assert.equal(res.headers.location, `/api/v1/users/${body.id}`);
      assert.equal(body.email, 'new.person@example.com');
      assert.equal(body.name, 'New Person');
      assert.equal(body.role, 'user');
      assert.equal(body.status, 'active');
      assert.equal(body.email_verified, false);
      assert.equal(body.last_login_at, null);
      assert.equal(body.password_hash, undefined);
      // Without a password the account exists but has nothing a password login could match.
      assert.equal((await row(String(body.id)))?.password_hash, null);
      const read = await t.app.inject({ url: String(res.headers.location), headers: rootH });
      assert.deepEqual(json(read), body);
    });

    it('creates an admin with a password; a weak password is 422 and creates nothing', async () => {
      const weak = await create({ email: 'weak@example.com', password: 'tooshort' });
      assert.equal(weak.statusCode, 422);
      assert.equal(json(weak).code, 'weak_password');
      assert.equal(
        await t.ctx.db
          .selectFrom('users')
          .select('id')
          .where('email', '=', 'weak@example.com')
          .executeTakeFirst(),
        undefined,
      );
      const res = await create({
        email: 'boss@example.com',
        role: 'admin',
        password: 'amber falcon ledger 5512',
      });
      assert.equal(res.statusCode, 201);
      assert.equal(json(res).role, 'admin');
      const stored = await row(String(json(res).id));
      assert.ok(await t.ctx.passwords.verify(stored!.password_hash!, 'amber falcon ledger 5512'));
    });

    it('refuses a taken email in any case (409) and invalid input (400)', async () => {
      await createUser(t, { email: 'taken@example.com' });
      const taken = await create({ email: 'TAKEN@example.com' });
      assert.equal(taken.statusCode, 409);
      assert.equal(json(taken).code, 'email_taken');
      for (const payload of [{}, { email: 'nope' }, { email: 'a@b.c', role: 'root' }, { email: 42 }]) {
        const res = await create(payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
      }
    });

    it('concurrent creates of one email: exactly one 201, the others 409', async () => {
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          create({ email: 'race@example.com', password: 'amber falcon ledger 5512' }),
        ),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 409, 409, 409]);
    });

    it('delete removes the user with sessions, refresh tokens, identities and invitations', async () => {
      const u = await createUser(t, { email: 'leaving@example.com' });
      const s = await sessionFor(t, u);
      await sessionFor(t, u);
      const now = Date.now();
      await t.ctx.db
        .insertInto('identities')
        .values({
          id: uuidv7(),
          user_id: u.id,
          issuer: 'https://idp.test',
          subject: 'sub-1',
          email: null,
          linked_at: now,
        })
        .execute();
      // An invitation is its one-time link (purpose `invitation`) plus its own row under the same id.
      const invite = async (userId: string, invitedBy: string | null, hash: string) => {
        const id = uuidv7();
        await t.ctx.db
          .insertInto('one_time_links')
          .values({
            id,
            user_id: userId,
            purpose: 'invitation',
            token_hash: hash,
            email: 'x@example.com',
            created_at: now,
            expires_at: now + 1000,
            used_at: null,
            replaced_at: null,
            code_hash: null,
            code_tries: 0,
          })
          .execute();
        await t.ctx.db
          .insertInto('invitations')
          .values({ id, role: 'user', invited_by: invitedBy })
          .execute();
        return id;
      };
      const other = await createUser(t, { email: 'invited-by-leaver@example.com', status: 'invited' });
      const own = await invite(u.id, root.id, 'h1');
      const sentByLeaver = await invite(other.id, u.id, 'h2');
      const sessionIds = (
        await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', u.id).execute()
      ).map((r) => r.id);
      assert.equal(sessionIds.length, 2);

      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${u.id}`, headers: rootH });
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.equal(await row(u.id), undefined);
      const count = async (
        table: 'sessions' | 'identities' | 'one_time_links' | 'invitations',
        column: string,
        value: string,
      ) =>
        (
          await t.ctx.db
            .selectFrom(table)
            .select('id')
            .where(column as 'id', '=', value)
            .execute()
        ).length;
      assert.equal(await count('sessions', 'user_id', u.id), 0);
      assert.equal(await count('identities', 'user_id', u.id), 0);
      assert.equal(await count('one_time_links', 'user_id', u.id), 0);
      assert.equal(await count('invitations', 'id', own), 0);
      const tokens = await t.ctx.db
        .selectFrom('refresh_tokens')
        .select('id')
        .where('session_id', 'in', sessionIds)
        .execute();
      assert.equal(tokens.length, 0);
      // An invitation the deleted user sent survives, without its sender.
      const sent = await t.ctx.db
        .selectFrom('invitations')
        .selectAll()
        .where('id', '=', sentByLeaver)
        .execute();
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.invited_by, null);

      const verify = await t.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${s.access_token}` },
      });
      assert.equal(verify.statusCode, 401);
      assert.equal((await t.app.inject({ url: `/api/v1/users/${u.id}`, headers: rootH })).statusCode, 404);
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${u.id}`, headers: rootH })).statusCode,
        404,
      );
    });

    it('an admin cannot delete themself (403); deleting another admin is fine while one remains', async () => {
      const self = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${root.id}`, headers: rootH });
      assert.equal(self.statusCode, 403);
      assert.equal(json(self).code, 'forbidden');
      const other = await createUser(t, { email: 'other-admin@example.com', role: 'admin' });
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${other.id}`, headers: rootH });
      assert.equal(res.statusCode, 204);
    });

    it('two admins deleting each other at once: one succeeds, the last admin stays', async () => {
      await t.ctx.db.updateTable('users').set({ status: 'disabled' }).where('role', '=', 'admin').execute();
      const a = await createUser(t, { email: 'del-a@example.com', role: 'admin' });
      const b = await createUser(t, { email: 'del-b@example.com', role: 'admin' });
      const [aH, bH] = [await authHeaders(t, a), await authHeaders(t, b)];
      const results = await Promise.all([
        t.app.inject({ method: 'DELETE', url: `/api/v1/users/${b.id}`, headers: aH }),
        t.app.inject({ method: 'DELETE', url: `/api/v1/users/${a.id}`, headers: bH }),
      ]);
      const codes = results.map((r) => r.statusCode);
      assert.equal(codes.filter((c) => c === 204).length, 1, String(codes));
      const loser = results.find((r) => r.statusCode !== 204)!;
      // Lost inside the transaction (409 last_admin) or after the winner's commit (401: session gone).
      assert.ok([409, 401].includes(loser.statusCode), String(codes));
      if (loser.statusCode === 409) assert.equal(json(loser).code, 'last_admin');
      const admins = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('role', '=', 'admin')
        .where('status', '=', 'active')
        .execute();
      assert.equal(admins.length, 1);
    });
  });
}
