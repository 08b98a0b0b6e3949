import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

// No ADMIN_EMAIL: the first start creates admin@example.com with a generated password (docs/api.md §10).
const NO_ADMIN_ENV = { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'warn' };
const CHOSEN = 'the operator chose this passphrase';

/** A first start on an empty database; returns the app and the password it printed once. */
async function firstStart(dialect: (typeof DIALECTS)[number], env: Record<string, string> = NO_ADMIN_ENV) {
  const lines: string[] = [];
  const t = await buildTestApp(dialect, { env, logLines: lines });
  const line = lines
    .map((l) => JSON.parse(l) as { generated_password?: string })
    .find((l) => l.generated_password);
  return { t, password: line?.generated_password };
}

for (const dialect of DIALECTS) {
  describe(`the generated first-admin password serves once (${dialect})`, () => {
    const apps: TestApp[] = [];
    after(async () => {
      for (const t of apps) await t.destroy();
    });
    let address = 0;
    const login = (t: TestApp, payload: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: '/api/v1/login', remoteAddress: `10.64.1.${++address}`, payload });

    /* generated-password-kept: the password printed at the first start could stay the admin's
       password for good (ASVS 5.0 6.4.1); now a sign-in with it must set a new one first. */
    it('a sign-in with the generated password answers 403 password_change_required and opens no session', async () => {
      const { t, password } = await firstStart(dialect);
      apps.push(t);
      assert.ok(password, 'the first start printed a generated password');
      const res = await login(t, { email: 'admin@example.com', password });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = json<{ code: string; detail: string; access_token?: string }>(res);
      assert.equal(body.code, 'password_change_required');
      assert.match(body.detail, /new_password/);
      assert.equal(body.access_token, undefined);
      const sessions = await t.ctx.db.selectFrom('sessions').select('id').execute();
      assert.deepEqual(sessions, [], 'no session opened');
      const refusal = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .where('target_id', '=', await adminId(t))
        .executeTakeFirstOrThrow();
      assert.equal(
        JSON.parse(refusal.details).reason,
        'password_change_required',
        'the refused sign-in is audited',
      );
      // A wrong password is still just a wrong password: nothing is said about the account.
      const wrong = await login(t, { email: 'admin@example.com', password: 'not the generated password' });
      assert.equal(wrong.statusCode, 401);
      assert.equal(json(wrong).code, 'invalid_credentials');
      const wrongWithNew = await login(t, {
        email: 'admin@example.com',
        password: 'not the generated password',
        new_password: CHOSEN,
      });
      assert.equal(wrongWithNew.statusCode, 401, 'new_password changes nothing without the right password');
    });

    /* generated-password-kept: the replacement follows the policy, and once set the generated
       password opens nothing; the new one signs in as usual. */
    it('the same sign-in with new_password replaces it, signs in, and the generated password is dead', async () => {
      const { t, password } = await firstStart(dialect);
      apps.push(t);
      assert.ok(password);
      const weak = await login(t, { email: 'admin@example.com', password, new_password: 'short' });
      assert.equal(weak.statusCode, 422, weak.body);
      assert.equal(json(weak).code, 'weak_password');
      const same = await login(t, { email: 'admin@example.com', password, new_password: password });
      assert.equal(same.statusCode, 422, 'the generated password cannot be kept by setting it again');
      /* generated-password-refusal-unaudited: a replacement the policy refused ended the sign-in
         with no login.failure entry and no count, unlike every other refusal after the password;
         now it goes through the pipeline's refuseSignIn like password_change_required. */
      const weakRefusals = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .where('target_id', '=', await adminId(t))
        .execute();
      assert.deepEqual(
        weakRefusals.map((r) => JSON.parse(r.details).reason),
        ['weak_password', 'weak_password'],
        'each refused replacement is audited',
      );

      const res = await login(t, { email: 'admin@example.com', password, new_password: CHOSEN });
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<{ access_token: string; user: { role: string } }>(res);
      assert.equal(tokens.user.role, 'admin');
      const profile = await t.app.inject({
        url: '/api/v1/profile',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(profile.statusCode, 200);

      const old = await login(t, { email: 'admin@example.com', password });
      assert.equal(old.statusCode, 401, 'the generated password opens nothing any more');
      const chosen = await login(t, { email: 'admin@example.com', password: CHOSEN });
      assert.equal(chosen.statusCode, 200, 'the new password signs in without new_password');
      const ignored = await login(t, {
        email: 'admin@example.com',
        password: CHOSEN,
        new_password: 'x'.repeat(20),
      });
      assert.equal(ignored.statusCode, 200);
      const again = await login(t, { email: 'admin@example.com', password: 'x'.repeat(20) });
      assert.equal(again.statusCode, 401, 'new_password is ignored for a password that was not generated');

      const actions = await t.ctx.db
        .selectFrom('audit_log')
        .select(['action', 'details'])
        .where('target_id', '=', await adminId(t))
        .orderBy('at')
        .orderBy('id')
        .execute();
      const names = actions.map((a) => a.action);
      assert.ok(names.includes('password.change'), names.join());
      const change = actions.find((a) => a.action === 'password.change');
      assert.equal(JSON.parse(change?.details ?? '{}').via, 'login.generated_password');
    });

    /* generated-password-kept: a password the operator chose (ADMIN_PASSWORD) is theirs and is
       not affected. */
    it('an ADMIN_PASSWORD the operator chose signs in at once', async () => {
      const { t, password } = await firstStart(dialect, {
        ADMIN_EMAIL: 'ops@example.com',
        ADMIN_PASSWORD: CHOSEN,
        LOG_LEVEL: 'warn',
      });
      apps.push(t);
      assert.equal(password, undefined, 'nothing generated');
      const res = await login(t, { email: 'ops@example.com', password: CHOSEN });
      assert.equal(res.statusCode, 200, res.body);
      const marks = await t.ctx.db.selectFrom('generated_passwords').select('user_id').execute();
      assert.deepEqual(marks, []);
    });
  });
}

async function adminId(t: TestApp): Promise<string> {
  const row = await t.ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', 'admin@example.com')
    .executeTakeFirstOrThrow();
  return row.id;
}
