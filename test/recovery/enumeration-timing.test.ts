import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser } from '../helpers/users.ts';
import { post, STRONG_PASSWORD, signIn } from './helpers.ts';

/*
 * No enumeration through timing (docs/api.md §11–12): the path of an existing address and the path of
 * an unknown (or free) one must not differ by the cost that would give them away — a password
 * hash. Samples of both paths are interleaved in pairs, and the median of the paired differences
 * is compared against half the cost of one argon2 hash timed beside each pair: a relative,
 * statistical bound, never a wall-clock one.
 */

const SAMPLES = 21;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function timed(run: () => Promise<{ statusCode: number }>, expected: number): Promise<number> {
  const start = process.hrtime.bigint();
  const res = await run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  assert.equal(res.statusCode, expected);
  return ms;
}

/** Interleaves the two paths (A B A B …) so drift in machine load hits both alike. */
async function compare(
  t: TestApp,
  a: (i: number) => Promise<{ statusCode: number }>,
  b: (i: number) => Promise<{ statusCode: number }>,
  expected: number,
): Promise<{ a: number; b: number; diff: number; hash: number; text: string }> {
  const ta: number[] = [];
  const tb: number[] = [];
  const th: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // Alternating which path goes first, and timing one hash in the same conditions as the pair.
    const [first, second, firstTimes, secondTimes] = i % 2 ? [b, a, tb, ta] : [a, b, ta, tb];
    firstTimes.push(await timed(() => first(i), expected));
    secondTimes.push(await timed(() => second(i), expected));
    th.push(
      await timed(async () => {
        await t.ctx.passwords.hash(`reference ${i}`);
        return { statusCode: 0 };
      }, 0),
    );
  }
  // The median of the paired differences: each pair ran under the same load, so drift in the
  // machine's load (other test files, other processes) cancels out of it.
  const diff = median(ta.map((x, i) => x - (tb[i] ?? 0)));
  const m = { a: median(ta), b: median(tb), diff, hash: median(th) };
  return {
    ...m,
    text: `medians ${m.a.toFixed(1)} / ${m.b.toFixed(1)} ms, paired difference ${diff.toFixed(1)} ms, one hash ${m.hash.toFixed(1)} ms`,
  };
}

for (const dialect of DIALECTS) {
  describe(`enumeration through timing [${dialect}]`, () => {
    let t: TestApp;
    // Every request from its own client address: the per-client budgets are not what is measured.
    let next = 0;
    const ip = () => `10.${(++next >> 8) & 255}.${next & 255}.9`;

    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      const admin = await signIn(t, ADMIN_EMAIL, ADMIN_PASSWORD);
      await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/registration',
        headers: { authorization: `Bearer ${admin.access_token}` },
        payload: { enabled: true },
      });
    });
    after(() => t.destroy());

    it('forgot-password: an existing account and an unknown address take about the same time', async () => {
      for (let i = 0; i < SAMPLES; i++) await createUser(t, { email: `known${i}@example.com` });
      const m = await compare(
        t,
        (i) => post(t, '/api/v1/password/forgot', { email: `known${i}@example.com` }, {}, ip()),
        (i) => post(t, '/api/v1/password/forgot', { email: `unknown${i}@example.com` }, {}, ip()),
        202,
      );
      if (process.env.TIMING_DIAG) console.log(m.text);
      assert.ok(Math.abs(m.diff) < m.hash / 2, m.text);
    });

    it('sign-up: a taken address and a new one take about the same time (both hash the password)', async () => {
      for (let i = 0; i < SAMPLES; i++) await createUser(t, { email: `member${i}@example.com` });
      const m = await compare(
        t,
        (i) =>
          post(t, '/api/v1/signup', { email: `member${i}@example.com`, password: STRONG_PASSWORD }, {}, ip()),
        (i) =>
          post(t, '/api/v1/signup', { email: `fresh${i}@example.com`, password: STRONG_PASSWORD }, {}, ip()),
        202,
      );
      if (process.env.TIMING_DIAG) console.log(m.text);
      assert.ok(Math.abs(m.diff) < m.hash / 2, m.text);
    });

    it('e-mail change: a taken new address and a free one take about the same time', async () => {
      await createUser(t, { email: 'mover@example.com', password: STRONG_PASSWORD });
      const s = await signIn(t, 'mover@example.com', STRONG_PASSWORD);
      const headers = { authorization: `Bearer ${s.access_token}` };
      for (let i = 0; i < SAMPLES; i++) await createUser(t, { email: `holder${i}@example.com` });
      const m = await compare(
        t,
        (i) =>
          post(
            t,
            '/api/v1/email/change',
            { new_email: `holder${i}@example.com`, current_password: STRONG_PASSWORD },
            headers,
            ip(),
          ),
        (i) =>
          post(
            t,
            '/api/v1/email/change',
            { new_email: `free${i}@example.com`, current_password: STRONG_PASSWORD },
            headers,
            ip(),
          ),
        202,
      );
      if (process.env.TIMING_DIAG) console.log(m.text);
      assert.ok(Math.abs(m.diff) < m.hash / 2, m.text);
    });
  });
}
