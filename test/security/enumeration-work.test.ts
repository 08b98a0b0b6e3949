import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { holdAfterAnswers, settleAfterAnswers } from '../../src/kernel/after-answer.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import { post, STRONG_PASSWORD, signIn } from '../recovery/helpers.ts';

/*
 * No enumeration through the work done (docs/api.md §5, §11, §12; docs/security.md Round 3): for
 * login, forgot-password, sign-up and e-mail change, a known address and an unknown one must cost
 * the same password-hashing work (argon2/bcrypt/scrypt runs, dummies included) and write the same
 * rows to every table, apart from the effect the contract names (a forgot-password mail to an
 * existing account, the account a sign-up creates). Counted, never timed.
 */

interface Work {
  kdf: number;
  hashes: number;
  rows: Record<string, number>;
}

async function tableNames(t: TestApp): Promise<string[]> {
  const tables = await t.ctx.db.introspection.getTables();
  return tables.map((x) => x.name).sort();
}

async function snapshot(t: TestApp, tables: string[]): Promise<Work> {
  const s = t.ctx.passwords.stats();
  const rows: Record<string, number> = {};
  for (const table of tables) {
    const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(
      t.ctx.db,
    );
    rows[table] = Number(r.rows[0]?.n ?? 0);
  }
  return { kdf: s.verifications + s.dummyVerifications, hashes: s.hashes, rows };
}

/** The work a request did: KDF runs, hashes, and rows added (or removed) per table. */
async function workOf(t: TestApp, run: () => Promise<LightMyRequestResponse>, status: number): Promise<Work> {
  const tables = await tableNames(t);
  const before = await snapshot(t, tables);
  const res = await run();
  assert.equal(res.statusCode, status, res.body);
  const after = await snapshot(t, tables);
  const rows: Record<string, number> = {};
  for (const table of tables) {
    const d = (after.rows[table] ?? 0) - (before.rows[table] ?? 0);
    if (d !== 0) rows[table] = d;
  }
  return { kdf: after.kdf - before.kdf, hashes: after.hashes - before.hashes, rows };
}

for (const dialect of DIALECTS) {
  describe(`no enumeration oracle in the work done [${dialect}]`, () => {
    let t: TestApp;
    let next = 0;
    // Each request from its own client address: the per-client budgets are not what is compared.
    const ip = () => `10.77.${(++next >> 8) & 255}.${next & 255}`;

    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      for (const m of ['registration', 'recovery', 'email', 'passwordless'] as const) {
        await t.ctx.modules.set(m, true);
      }
      // The oauth module adds its RS256 key and cookie key once, in the background, at start
      // (docs/oauth.md). Discovery waits for that, so asking for it first keeps that one-time write
      // out of the rows the first compared request is charged with.
      await t.app.inject({ url: '/.well-known/openid-configuration' });
    });
    after(() => t?.destroy());

    it('enumeration-work-login: a known address and an unknown one cost one KDF run and the same rows', async () => {
      await createUser(t, { email: 'known-login@example.com', password: STRONG_PASSWORD });
      const body = (email: string) => ({ email, password: 'not the password at all 1' });
      const known = await workOf(
        t,
        () => post(t, '/api/v1/login', body('known-login@example.com'), {}, ip()),
        401,
      );
      const unknown = await workOf(
        t,
        () => post(t, '/api/v1/login', body('nobody-login@example.com'), {}, ip()),
        401,
      );
      assert.deepEqual(known, unknown);
      assert.equal(known.kdf, 1);
    });

    it('enumeration-work-login-unverifiable-hash: an account whose stored hash is over the ceilings still spends one KDF run', async () => {
      // Before: the hasher refused the row unread and login answered 401 at once, with no KDF run,
      // telling that the account exists (an imported or legacy hash, src/identity/passwords/passwords.ts).
      const user = await createUser(t, { email: 'heavy-hash@example.com', password: STRONG_PASSWORD });
      const heavy = '$argon2id$v=19$m=4194304,t=64,p=64$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo';
      await t.ctx.db.updateTable('users').set({ password_hash: heavy }).where('id', '=', user.id).execute();
      const body = (email: string) => ({ email, password: STRONG_PASSWORD });
      const known = await workOf(
        t,
        () => post(t, '/api/v1/login', body('heavy-hash@example.com'), {}, ip()),
        401,
      );
      const unknown = await workOf(
        t,
        () => post(t, '/api/v1/login', body('nobody-heavy@example.com'), {}, ip()),
        401,
      );
      assert.deepEqual(known, unknown);
      assert.equal(known.kdf, 1);
    });

    it('enumeration-work-forgot-password: no hashing either way, the same rows at the answer; the contract mail after it', async () => {
      /* enumeration-time-forgot: the known path wrote its link and mail before answering, 0.7–1.0 ms
         slower than an unknown address (median of 30). Now both do the same work before the answer
         (docs/api.md §11); the link and the mail follow in their own transaction after it. */
      await createUser(t, { email: 'known-forgot@example.com' });
      await createUser(t, { email: 'disabled-forgot@example.com', status: 'disabled' });
      const ask = (email: string) => () => post(t, '/api/v1/password/forgot', { email }, {}, ip());
      const release = holdAfterAnswers(t.ctx);
      const known = await workOf(t, ask('known-forgot@example.com'), 202);
      const unknown = await workOf(t, ask('nobody-forgot@example.com'), 202);
      const disabled = await workOf(t, ask('disabled-forgot@example.com'), 202);
      assert.deepEqual([known.kdf, known.hashes], [0, 0]);
      assert.deepEqual(known, unknown);
      assert.deepEqual(disabled, unknown);
      // docs/api.md §11: only an active account gets a mail — its link and its outbox row, after the answer.
      const later = await workOf(
        t,
        async () => {
          release();
          await settleAfterAnswers(t.ctx);
          return { statusCode: 202, body: '' } as LightMyRequestResponse;
        },
        202,
      );
      assert.deepEqual(later.rows, { one_time_links: 1, outbox: 1 });
      const mail = await t.ctx.db
        .selectFrom('outbox')
        .select('recipient')
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow();
      assert.equal(mail.recipient, 'known-forgot@example.com');
    });

    it('enumeration-work-signup: a taken address and a new one hash once and queue one mail each', async () => {
      await createUser(t, { email: 'taken-signup@example.com', password: STRONG_PASSWORD });
      const body = (email: string) => ({ email, password: STRONG_PASSWORD });
      const taken = await workOf(
        t,
        () => post(t, '/api/v1/signup', body('taken-signup@example.com'), {}, ip()),
        202,
      );
      const fresh = await workOf(
        t,
        () => post(t, '/api/v1/signup', body('fresh-signup@example.com'), {}, ip()),
        202,
      );
      assert.deepEqual([taken.kdf, taken.hashes], [0, 1]);
      assert.deepEqual([fresh.kdf, fresh.hashes], [0, 1]);
      // The new account itself (its row and its search-index rows) is the sign-up's effect; the
      // link, the mail, the audit entry and the budgets move alike.
      const freshRest = Object.fromEntries(
        Object.entries(fresh.rows).filter(([k]) => !k.startsWith('users')),
      );
      assert.equal(fresh.rows.users, 1);
      assert.deepEqual(taken.rows, freshRest);
      assert.equal(taken.rows.outbox, 1);
    });

    it('enumeration-work-email-change: a taken new address and a free one write the same rows', async () => {
      // Before: a free address got a link row and a taken one none — one insert's difference.
      await createUser(t, { email: 'mover-work@example.com', password: STRONG_PASSWORD });
      await createUser(t, { email: 'holder-work@example.com' });
      const s = await signIn(t, 'mover-work@example.com', STRONG_PASSWORD);
      const headers = { authorization: `Bearer ${s.access_token}` };
      const change = (new_email: string) => () =>
        post(t, '/api/v1/email/change', { new_email, current_password: STRONG_PASSWORD }, headers, ip());
      const taken = await workOf(t, change('holder-work@example.com'), 202);
      const free = await workOf(t, change('free-work@example.com'), 202);
      assert.deepEqual(taken, free);
      assert.equal(taken.kdf, 1);
      assert.equal(taken.rows.outbox, 2);
    });

    it('enumeration-work-email-signin-request: active, disabled and unknown addresses write the same rows at the answer; the pair and its mail after it', async () => {
      /* enumeration-time-email-signin: the known path wrote its pair and mail before answering,
         0.7–1.0 ms slower than an unknown address. Now the answer comes first for every address
         (docs/api.md §20); the pair and the mail follow in their own transaction. */
      await createUser(t, { email: 'known-pwl@example.com' });
      await createUser(t, { email: 'disabled-pwl@example.com', status: 'disabled' });
      const ask = (email: string) => () => post(t, '/api/v1/login/email', { email }, {}, ip());
      const release = holdAfterAnswers(t.ctx);
      const known = await workOf(t, ask('known-pwl@example.com'), 202);
      const disabled = await workOf(t, ask('disabled-pwl@example.com'), 202);
      const unknown = await workOf(t, ask('nobody-pwl@example.com'), 202);
      assert.deepEqual(known, unknown);
      assert.deepEqual(disabled, unknown);
      assert.deepEqual([known.kdf, known.hashes], [0, 0]);
      // docs/api.md §20: only an active account gets the pair and the mail, after the answer.
      const later = await workOf(
        t,
        async () => {
          release();
          await settleAfterAnswers(t.ctx);
          return { statusCode: 202, body: '' } as LightMyRequestResponse;
        },
        202,
      );
      assert.deepEqual(later.rows, { one_time_links: 1, outbox: 1 });
    });

    it('enumeration-work-email-signin-verify: a wrong code for a live pair and a code for an unknown address write the same rows', async () => {
      await createUser(t, { email: 'pair-pwl@example.com' });
      assert.equal(
        (await post(t, '/api/v1/login/email', { email: 'pair-pwl@example.com' }, {}, ip())).statusCode,
        202,
      );
      // The pair is written after the answer (docs/api.md §20): wait for it, then compare.
      await settleAfterAnswers(t.ctx);
      const guess = (email: string) => () =>
        post(t, '/api/v1/login/email/verify', { email, code: '999999' }, {}, ip());
      const known = await workOf(t, guess('pair-pwl@example.com'), 401);
      const unknown = await workOf(t, guess('nobody-pair-pwl@example.com'), 401);
      assert.deepEqual(known, unknown);
    });

    it('enumeration-work-admin-untouched: the first admin still signs in', async () => {
      await signIn(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    });
  });
}
