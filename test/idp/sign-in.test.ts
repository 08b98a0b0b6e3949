import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, postVerify, problem, signInThroughIdp } from '../helpers/idp.ts';
import { createUser } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

interface SignInBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
  created: boolean;
  user: {
    id: string;
    email: string;
    name: string;
    role: string;
    status: string;
    email_verified: boolean;
    last_login_at: string | null;
  };
}

for (const dialect of DIALECTS) {
  describe(`idp sign-in: genuine ID tokens from a real provider [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('provisions on the first sign-in and finds the same user on the second', async () => {
      const first = await signInThroughIdp(t, op, 'alice');
      assert.equal(first.statusCode, 200, first.body);
      const body = json<SignInBody>(first);
      assert.equal(body.created, true);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(typeof body.refresh_token, 'string');
      assert.equal(body.user.email, 'alice@example.com');
      assert.equal(body.user.name, 'Alice Example');
      assert.equal(body.user.role, 'user');
      assert.equal(body.user.status, 'active');
      assert.equal(body.user.email_verified, true);
      assert.notEqual(body.user.last_login_at, null);

      // The session is a real Gatehouse session.
      const check = await t.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${body.access_token}` },
      });
      assert.equal(check.statusCode, 200);
      assert.equal(json<{ user: { id: string } }>(check).user.id, body.user.id);
      // A provider sign-in is federated authentication (RFC 8176 `fed`), not a password.
      assert.deepEqual(json<{ claims: { amr: string[] } }>(check).claims.amr, ['fed']);

      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('subject', '=', 'alice')
        .executeTakeFirstOrThrow();
      assert.equal(identity.issuer, op.issuer);
      assert.equal(identity.user_id, body.user.id);
      assert.equal(identity.email, 'alice@example.com');
      assert.equal(typeof identity.linked_at, 'number');

      const second = await signInThroughIdp(t, op, 'alice');
      assert.equal(second.statusCode, 200, second.body);
      const again = json<SignInBody>(second);
      assert.equal(again.created, false);
      assert.equal(again.user.id, body.user.id);
      assert.notEqual(again.refresh_token, body.refresh_token);
      assert.deepEqual(await countFor(t, 'alice@example.com', 'alice'), { users: 1, identities: 1 });
    });

    it('links a verified email to the existing account (emails compared normalized)', async () => {
      const existing = await createUser(t, { email: 'carol@example.com', name: 'Carol Local' });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', existing.id).execute();
      op.setAccount('carol', { email: 'Carol@Example.COM', email_verified: true, name: 'Carol Remote' });

      const res = await signInThroughIdp(t, op, 'carol');
      assert.equal(res.statusCode, 200, res.body);
      const body = json<SignInBody>(res);
      assert.equal(body.created, false);
      assert.equal(body.user.id, existing.id);
      assert.equal(body.user.name, 'Carol Local', 'the provider does not rename an existing account');
      assert.equal(body.user.email_verified, true, 'the provider verified the address');
      assert.deepEqual(await countFor(t, 'carol@example.com', 'carol'), { users: 1, identities: 1 });
    });

    it('refuses an unverified email that belongs to an existing account: 401 (as for a free one), no link, no duplicate', async () => {
      await createUser(t, { email: 'bob@example.com' });
      const res = await signInThroughIdp(t, op, 'bob');
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(problem(res).code, 'idp_token_invalid');
      assert.deepEqual(await countFor(t, 'bob@example.com', 'bob'), { users: 1, identities: 0 });
    });

    it('an account provisioned from an unverified email (before such addresses were refused) is never linked to another identity', async () => {
      // Such accounts exist from earlier versions; made here the way that sign-in made them.
      const frank = await createUser(t, { email: 'frank@example.com' });
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', frank.id).execute();
      await t.ctx.db
        .insertInto('identities')
        .values({
          id: '0193aaaa-0000-7000-8000-00000000f4a1',
          user_id: frank.id,
          issuer: op.issuer,
          subject: 'frank',
          email: 'frank@example.com',
          linked_at: Date.now(),
        })
        .execute();

      // Whoever claimed the address first does not get to share the account with its real owner.
      op.setAccount('frank-real', { email: 'frank@example.com', email_verified: true });
      const real = await signInThroughIdp(t, op, 'frank-real');
      assert.equal(real.statusCode, 409, real.body);
      // docs/api.md §16: `identity_link_required` replaces `email_taken` for a refused link.
      assert.equal(problem(real).code, 'identity_link_required');
      assert.deepEqual(await countFor(t, 'frank@example.com', 'frank-real'), { users: 1, identities: 0 });

      // Once the provider verifies the address for the same subject, the account says so too.
      op.setAccount('frank', { email: 'frank@example.com', email_verified: true });
      const verified = await signInThroughIdp(t, op, 'frank');
      assert.equal(verified.statusCode, 200, verified.body);
      assert.equal(json<SignInBody>(verified).user.id, frank.id);
      assert.equal(json<SignInBody>(verified).user.email_verified, true);
    });

    it('refuses a disabled account, whether found by identity or by email', async () => {
      await createUser(t, { email: 'dave@example.com', status: 'disabled' });
      op.setAccount('dave', { email: 'dave@example.com', email_verified: true });
      const byEmail = await signInThroughIdp(t, op, 'dave');
      assert.equal(byEmail.statusCode, 403, byEmail.body);
      assert.equal(problem(byEmail).code, 'account_disabled');
      assert.deepEqual(await countFor(t, 'dave@example.com', 'dave'), { users: 1, identities: 0 });

      const alice = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'alice@example.com')
        .executeTakeFirstOrThrow();
      await t.ctx.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', alice.id).execute();
      try {
        const byIdentity = await signInThroughIdp(t, op, 'alice');
        assert.equal(byIdentity.statusCode, 403, byIdentity.body);
        assert.equal(problem(byIdentity).code, 'account_disabled');
      } finally {
        await t.ctx.db.updateTable('users').set({ status: 'active' }).where('id', '=', alice.id).execute();
      }
    });

    it('does not activate an invited account by email: 403 forbidden, no link', async () => {
      await createUser(t, { email: 'ivy@example.com', status: 'invited' });
      op.setAccount('ivy', { email: 'ivy@example.com', email_verified: true });
      const res = await signInThroughIdp(t, op, 'ivy');
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(problem(res).code, 'forbidden');
      assert.deepEqual(await countFor(t, 'ivy@example.com', 'ivy'), { users: 1, identities: 0 });
      const row = await t.ctx.db
        .selectFrom('users')
        .select('status')
        .where('email', '=', 'ivy@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'invited');
    });

    it('two concurrent first sign-ins of one identity make one user and one identity', async () => {
      op.setAccount('erin', { email: 'erin@example.com', email_verified: true, name: 'Erin' });
      const [a, b] = await Promise.all([op.signIn('erin'), op.signIn('erin')]);
      const results = await Promise.all(
        [a, b].map((r) => postVerify(t, { id_token: r.idToken, nonce: r.nonce })),
      );
      for (const res of results) assert.equal(res.statusCode, 200, res.body);
      const bodies = results.map((res) => json<SignInBody>(res));
      assert.deepEqual(bodies.map((b) => b.created).sort(), [false, true]);
      assert.equal(bodies[0]?.user.id, bodies[1]?.user.id);
      assert.deepEqual(await countFor(t, 'erin@example.com', 'erin'), { users: 1, identities: 1 });
    });

    it('rejects bodies with unknown fields or no token', async () => {
      const extra = await postVerify(t, { id_token: 'x.y.z', role: 'admin' });
      assert.equal(extra.statusCode, 400);
      assert.equal(problem(extra).code, 'validation_failed');
      const missing = await postVerify(t, {});
      assert.equal(missing.statusCode, 400);
    });
  });
}
