import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { AuditRow } from '../../src/identity/index.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { auditEntries, clearAudit } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type InviteResponseBody, invite, setPassword, tokenOf } from '../invitations/helpers.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

// One way in (docs/architecture.md): every sign-in ends in signIn. These pin what each way
// in records through it — the audit entries' `details` as stored text (key order included), and
// whether the sign-in counts as a login (`last_login_at`) — so that moving the ways in onto the one
// pipeline changed nothing they write.

const PASSWORD = 'a long and unusual passphrase 7';
const NEW_PASSWORD = 'another quite unusual passphrase 8';

interface Tokens {
  access_token: string;
  user: { id: string; last_login_at: string | null };
}

const sid = (tokens: Tokens) => String(decodeJwt(tokens.access_token).sid);

for (const dialect of DIALECTS) {
  describe(`one way in: what each sign-in records [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    const lastLogin = async (userId: string) =>
      (
        await t.ctx.db
          .selectFrom('users')
          .select('last_login_at')
          .where('id', '=', userId)
          .executeTakeFirstOrThrow()
      ).last_login_at;
    const entries = async (): Promise<Array<Pick<AuditRow, 'action' | 'details'>>> =>
      (await auditEntries(t)).map((r) => ({ action: r.action, details: r.details }));

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op, { API_FORM: 'full' }) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('password login: last_login_at set, one login.success with method, rehashed, amr, session_id', async () => {
      const user = await createUser(t, { email: 'pipeline-pwd@example.com', password: PASSWORD });
      await clearAudit(t);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'pipeline-pwd@example.com', password: PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<Tokens>(res);
      assert.deepEqual(await entries(), [
        {
          action: 'login.success',
          details: `{"method":"password","rehashed":false,"amr":["pwd"],"session_id":"${sid(tokens)}"}`,
        },
      ]);
      assert.notEqual(await lastLogin(user.id), null);
      assert.equal(tokens.user.last_login_at, new Date(Number(await lastLogin(user.id))).toISOString());
    });

    it('password change: a new session, no login counted, password.change and no login.success', async () => {
      const user = await createUser(t, { email: 'pipeline-change@example.com', password: PASSWORD });
      const before = await lastLogin(user.id);
      const headers = await authHeaders(t, user);
      await clearAudit(t);
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        headers,
        payload: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(sid(json<Tokens>(res)));
      assert.deepEqual(await entries(), [{ action: 'password.change', details: '{"sessions_revoked":1}' }]);
      assert.equal(await lastLogin(user.id), before);
    });

    it('invitation acceptance: a new session, no login counted, invitation.accept and no login.success', async () => {
      const admin = await createUser(t, { role: 'admin', email: 'pipeline-admin@example.com' });
      const created = await invite(t, await authHeaders(t, admin), { email: 'pipeline-invited@example.com' });
      assert.equal(created.statusCode, 201, created.body);
      const body = json<InviteResponseBody>(created);
      await clearAudit(t);
      const res = await setPassword(t, tokenOf(body), NEW_PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<Tokens>(res);
      assert.ok(sid(tokens));
      assert.equal(tokens.user.last_login_at, null);
      assert.deepEqual(await entries(), [
        { action: 'invitation.accept', details: `{"user_id":"${body.user.id}"}` },
      ]);
      assert.equal(await lastLogin(body.user.id), null);
    });

    it('identity provider: last_login_at set; user.create, identity.link, then login.success without amr', async () => {
      await clearAudit(t);
      const res = await signInThroughIdp(t, op, 'alice');
      assert.equal(res.statusCode, 200, res.body);
      const tokens = json<Tokens>(res);
      const rows = await entries();
      assert.deepEqual(
        rows.map((r) => r.action),
        ['user.create', 'identity.link', 'login.success'],
      );
      assert.equal(
        rows[2]?.details,
        `{"method":"idp","session_id":"${sid(tokens)}","issuer":"${op.issuer}","subject":"alice","created":true}`,
      );
      assert.notEqual(await lastLogin(tokens.user.id), null);
    });
  });
}
