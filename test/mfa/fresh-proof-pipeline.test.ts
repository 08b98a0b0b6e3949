import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { caller, enableTotp, PASSWORD, userWithSession } from './helpers.ts';

/*
 * fresh-proof-beside-the-pipeline: fresh proofs (src/modules/mfa/reauth.ts) kept their own throttle
 * bookkeeping and audit writer beside the sign-in pipeline, so a wrong proof was audited but never
 * counted in gatehouse_logins_total (only a throttled one was). Now they run in withLoginAttempt and
 * are refused by refuseSignIn (src/identity/sign-in/fresh-proof.ts): the same entry as before (by the
 * signed-in user, with the change's purpose), a wrong proof counted `failure`, a good proof no login.
 */
const logins = (ctx: TestApp['ctx'], outcome: string) =>
  ctx.metrics.logins.get().then((m) => m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0);

for (const dialect of DIALECTS) {
  describe(`fresh proofs go through the sign-in pipeline [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('a wrong proof: the entry by the signed-in user with its purpose, counted failure; a good one counts no login', async () => {
      const { user, token } = await userWithSession(t);
      await enableTotp(t, token);
      const call = caller(t, token);
      const failures = await logins(t.ctx, 'failure');
      const successes = await logins(t.ctx, 'success');

      const wrong = await call('POST', '/api/v1/mfa/recovery-codes', {
        current_password: 'not the password 12',
      });
      assert.equal(wrong.statusCode, 401, wrong.body);
      assert.equal(json(wrong).code, 'invalid_credentials');
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .select(['actor_type', 'actor_id', 'details'])
        .where('action', '=', 'login.failure')
        .where('target_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(entry.actor_type, 'user');
      assert.equal(entry.actor_id, user.id);
      assert.deepEqual(JSON.parse(entry.details), {
        method: 'password',
        reason: 'invalid_credentials',
        purpose: 'recovery_codes_regenerate',
      });
      assert.equal(await logins(t.ctx, 'failure'), failures + 1, 'the wrong proof is counted');

      const good = await call('POST', '/api/v1/mfa/recovery-codes', { current_password: PASSWORD });
      assert.equal(good.statusCode, 200, good.body);
      assert.equal(await logins(t.ctx, 'success'), successes, 'a proof is no login');
      assert.equal(await logins(t.ctx, 'failure'), failures + 1);
    });
  });
}
