import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ACCOUNT_FAILURE_LIMIT } from '../../src/identity/budgets/throttle.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';

// Issue 17.1: the throttle was read before argon2 and the failure written after it, so guesses sent
// at once were all hashed (18 parallel wrong-then-right guesses found a password). Every check now
// reserves its attempt before hashing. Two app instances on one database (two connection pools)
// take the requests alternately, as two processes behind a load balancer would.
const PASSWORD = 'a long and unusual passphrase 7';
const WRONG = 'not the passphrase at all, sorry';
const PARALLEL = 100;
const ADDRESS_BUDGET = 30;

const statuses = (responses: LightMyRequestResponse[]) => {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.statusCode] = (counts[r.statusCode] ?? 0) + 1;
  // Any answer but 401/429 is shown with its body, so a failure says which refusal it was.
  const other = responses.find((r) => r.statusCode !== 401 && r.statusCode !== 429 && r.statusCode !== 200);
  if (other) Object.assign(counts, { other: other.body.slice(0, 300) });
  return counts;
};

async function failuresAudited(t: TestApp, userId: string): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom('audit_log')
    .select('id')
    .where('action', '=', 'login.failure')
    .where('target_id', '=', userId)
    .execute();
  return rows.length;
}

for (const dialect of DIALECTS) {
  describe(`parallel guesses against the throttle [${dialect}]`, () => {
    let a: TestApp;
    let b: TestApp;
    let c: TestApp;
    let d: TestApp;
    const login = (app: TestApp, email: string, password: string, remoteAddress: string) =>
      app.app.inject({ method: 'POST', url: '/api/v1/login', payload: { email, password }, remoteAddress });

    before(async () => {
      // a/b: the account budget alone (a roomy address budget); c/d: the address budget.
      a = await buildTestApp(dialect, { env: { LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '1000' } });
      b = await a.restart();
      // The hashing queue's own 503 (test/auth/hash-capacity.test.ts) is a separate defence; it is
      // made roomy here so the only refusals left to count are the budget's.
      c = await buildTestApp(dialect, {
        env: { LOGIN_FAILURES_PER_ADDRESS_PER_MIN: String(ADDRESS_BUDGET), PASSWORD_HASH_QUEUE: '1000' },
      });
      d = await c.restart();
    });
    after(async () => {
      await b.close();
      await a.destroy();
      await d.close();
      await c.destroy();
    });

    it('parallel-guesses-beat-login-throttle: of 100 concurrent guesses at one account, at most 5 wrong ones are evaluated', async () => {
      const user = await createUser(a, { password: PASSWORD });
      // Wrong guesses first and the right password last: the attack of the issue.
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          login(i % 2 ? b : a, user.email, i === PARALLEL - 1 ? PASSWORD : WRONG, '10.17.1.1'),
        ),
      );
      const counts = statuses(responses);
      assert.ok((counts[401] ?? 0) <= ACCOUNT_FAILURE_LIMIT, `statuses ${JSON.stringify(counts)}`);
      assert.equal(
        await failuresAudited(a, user.id),
        counts[401] ?? 0,
        'one failure entry per evaluated guess',
      );
      assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), PARALLEL, `statuses ${JSON.stringify(counts)}`);
      assert.equal(
        responses.at(-1)?.statusCode,
        429,
        'the right password behind the spent budget is not tried',
      );
      for (const r of responses.filter((x) => x.statusCode === 429)) {
        assert.ok(Number(r.headers['retry-after']) >= 1);
      }
      // The owner, from their own address, is not locked out by the attacker's.
      assert.equal((await login(b, user.email, PASSWORD, '10.17.1.2')).statusCode, 200);
    });

    it('parallel-guesses-beat-login-throttle: a right password among parallel guesses succeeds only within the budget', async () => {
      const user = await createUser(a, { password: PASSWORD });
      // The right password first: it holds one of the five attempts; a success resets the count.
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          login(i % 2 ? b : a, user.email, i === 0 ? PASSWORD : WRONG, '10.17.2.1'),
        ),
      );
      const counts = statuses(responses);
      const right = responses[0]?.statusCode;
      assert.ok(right === 200 || right === 429, `right password answered ${right}`);
      // At most one budget of wrong guesses per window; the success may open one more window.
      const windows = right === 200 ? 2 : 1;
      assert.ok((counts[401] ?? 0) <= ACCOUNT_FAILURE_LIMIT * windows, `statuses ${JSON.stringify(counts)}`);
      assert.equal(await failuresAudited(a, user.id), counts[401] ?? 0);
      assert.ok((counts[429] ?? 0) >= PARALLEL - 1 - ACCOUNT_FAILURE_LIMIT * windows);
    });

    it('parallel-guesses-beat-address-budget: of 100 concurrent guesses from one address, at most the per-address budget is evaluated', async () => {
      const user = await createUser(c, { password: PASSWORD });
      const before = c.ctx.passwords.stats().dummyVerifications + d.ctx.passwords.stats().dummyVerifications;
      // 99 different unknown accounts (each hashed once, with the dummy hash) and a real one last.
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          i === PARALLEL - 1
            ? login(d, user.email, PASSWORD, '10.17.3.1')
            : login(i % 2 ? d : c, `nobody-${i}@example.com`, WRONG, '10.17.3.1'),
        ),
      );
      const counts = statuses(responses);
      const hashed =
        c.ctx.passwords.stats().dummyVerifications + d.ctx.passwords.stats().dummyVerifications - before;
      assert.ok((counts[401] ?? 0) <= ADDRESS_BUDGET, `statuses ${JSON.stringify(counts)}`);
      assert.equal(hashed, counts[401] ?? 0, 'one dummy verification per evaluated guess');
      assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), PARALLEL, `statuses ${JSON.stringify(counts)}`);
      assert.equal(responses.at(-1)?.statusCode, 429);
      // Another address still has its whole budget.
      assert.equal((await login(c, user.email, PASSWORD, '10.17.3.2')).statusCode, 200);
    });

    it('parallel-guesses-beat-change-password-throttle: of 100 concurrent wrong current passwords, at most 5 are evaluated', async () => {
      const user = await createUser(a, { password: PASSWORD });
      const session = await login(a, user.email, PASSWORD, '10.17.4.1');
      assert.equal(session.statusCode, 200);
      const authorization = `Bearer ${(JSON.parse(session.body) as { access_token: string }).access_token}`;
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          (i % 2 ? b : a).app.inject({
            method: 'PUT',
            url: '/api/v1/change-password',
            headers: { authorization },
            remoteAddress: '10.17.4.1',
            payload: {
              current_password: `${WRONG} ${i}`,
              new_password: 'another long passphrase entirely 9',
            },
          }),
        ),
      );
      const counts = statuses(responses);
      assert.ok((counts[401] ?? 0) <= ACCOUNT_FAILURE_LIMIT, `statuses ${JSON.stringify(counts)}`);
      assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), PARALLEL, `statuses ${JSON.stringify(counts)}`);
      for (const r of responses.filter((x) => x.statusCode === 401)) {
        assert.equal((JSON.parse(r.body) as { code: string }).code, 'invalid_credentials');
      }
    });
  });
}
