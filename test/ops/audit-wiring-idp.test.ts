import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { AuditRow } from '../../src/identity/index.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { assertEntry, auditEntries, clearAudit, onlyEntry, refuseInserts } from '../helpers/audit.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv } from '../helpers/idp.ts';
import { createUser } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

const UA = 'audit-wiring-idp/1.0';

interface SignIn {
  access_token: string;
  created: boolean;
  user: { id: string };
}

for (const dialect of DIALECTS) {
  describe(`audit wiring: idp [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    const verify = (body: Record<string, unknown>, remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/verify',
        payload: body,
        headers: { 'user-agent': UA },
        remoteAddress,
      });
    const signIn = async (accountId: string, remoteAddress: string) => {
      const { idToken, nonce } = await op.signIn(accountId);
      return verify({ id_token: idToken, nonce }, remoteAddress);
    };
    const logins = async (outcome: string) => {
      const res = await t.app.inject({ url: '/metrics' });
      const m = new RegExp(`^gatehouse_logins_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(res.body);
      assert.ok(m, `no login counter for ${outcome}`);
      return Number(m[1]);
    };
    const byAction = (rows: AuditRow[], action: string) => {
      const matching = rows.filter((r) => r.action === action);
      assert.equal(matching.length, 1, `expected one ${action}`);
      return matching[0];
    };

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op, { METRICS_PUBLIC: 'true' }) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('a first sign-in leaves user.create, identity.link and login.success, and counts a success', async () => {
      const successBefore = await logins('success');
      await clearAudit(t);
      const res = await signIn('alice', '192.0.2.10');
      assert.equal(res.statusCode, 200, res.body);
      const body = json<SignIn>(res);
      assert.equal(body.created, true);
      const userId = body.user.id;
      const identity = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('subject', '=', 'alice')
        .executeTakeFirstOrThrow();

      const rows = await auditEntries(t);
      assert.deepEqual(rows.map((r) => r.action).sort(), ['identity.link', 'login.success', 'user.create']);
      const common = { outcome: 'success', ip: '192.0.2.10', user_agent: UA } as const;
      assertEntry(byAction(rows, 'user.create'), {
        ...common,
        action: 'user.create',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: 'user',
        target_id: userId,
        details: { via: 'idp', issuer: op.issuer, role: 'user' },
      });
      assertEntry(byAction(rows, 'identity.link'), {
        ...common,
        action: 'identity.link',
        actor_type: 'user',
        actor_id: userId,
        target_type: 'identity',
        target_id: identity.id,
        details: { issuer: op.issuer, subject: 'alice', user_id: userId, by: 'provisioning' },
      });
      assertEntry(byAction(rows, 'login.success'), {
        ...common,
        action: 'login.success',
        actor_type: 'user',
        actor_id: userId,
        target_type: 'user',
        target_id: userId,
        details: {
          method: 'idp',
          session_id: String(decodeJwt(body.access_token).sid),
          issuer: op.issuer,
          subject: 'alice',
          created: true,
        },
      });
      assert.equal(await logins('success'), successBefore + 1);

      // The next sign-in of the same identity is a login and nothing else.
      await clearAudit(t);
      const again = await signIn('alice', '192.0.2.11');
      assert.equal(again.statusCode, 200, again.body);
      const row = await onlyEntry(t);
      assert.equal(row.action, 'login.success');
      assert.equal(JSON.parse(row.details).created, false);
      assert.equal(await logins('success'), successBefore + 2);
    });

    it('linking by email leaves identity.link (by email) and login.success, no user.create', async () => {
      const holder = await createUser(t, { email: 'carol@example.com' });
      op.setAccount('carol', { email: 'carol@example.com', email_verified: true, name: 'Carol' });
      await clearAudit(t);
      const res = await signIn('carol', '192.0.2.12');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<SignIn>(res).created, false);
      const identity = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('subject', '=', 'carol')
        .executeTakeFirstOrThrow();
      const rows = await auditEntries(t);
      assert.deepEqual(rows.map((r) => r.action).sort(), ['identity.link', 'login.success']);
      assertEntry(byAction(rows, 'identity.link'), {
        action: 'identity.link',
        outcome: 'success',
        actor_type: 'user',
        actor_id: holder.id,
        target_type: 'identity',
        target_id: identity.id,
        ip: '192.0.2.12',
        user_agent: UA,
        details: { issuer: op.issuer, subject: 'carol', user_id: holder.id, by: 'email' },
      });
    });

    it('a disabled account: one login.failure naming it, counted as a failure', async () => {
      op.setAccount('dora', { email: 'dora@example.com', email_verified: true, name: 'Dora' });
      const first = await signIn('dora', '192.0.2.13');
      assert.equal(first.statusCode, 200, first.body);
      const userId = json<SignIn>(first).user.id;
      await t.ctx.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', userId).execute();
      const failuresBefore = await logins('failure');
      await clearAudit(t);

      const res = await signIn('dora', '192.0.2.14');
      assert.equal(res.statusCode, 403);
      assert.equal(json(res).code, 'account_disabled');
      assertEntry(await onlyEntry(t), {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: 'user',
        target_id: userId,
        ip: '192.0.2.14',
        user_agent: UA,
        details: {
          method: 'idp',
          reason: 'account_disabled',
          detail: 'This account is disabled',
          issuer: op.issuer,
          subject: 'dora',
          email: 'dora@example.com',
        },
      });
      assert.equal(await logins('failure'), failuresBefore + 1);
    });

    it('a rejected ID token: one login.failure without target or claims', async () => {
      const failuresBefore = await logins('failure');
      await clearAudit(t);
      const token = await op.craftIdToken({ aud: 'some-other-client' });
      const res = await verify({ id_token: token }, '192.0.2.15');
      assert.equal(res.statusCode, 401);
      assert.equal(json(res).code, 'idp_token_invalid');
      const row = await onlyEntry(t);
      assertEntry(row, {
        action: 'login.failure',
        outcome: 'failure',
        actor_type: 'anonymous',
        actor_id: null,
        target_type: null,
        target_id: null,
        ip: '192.0.2.15',
        user_agent: UA,
        details: { method: 'idp', reason: 'idp_token_invalid', detail: String(json(res).detail) },
      });
      assert.ok(!row.details.includes(token));
      assert.equal(await logins('failure'), failuresBefore + 1);
    });

    it('a first sign-in whose audit entries cannot be written creates no user and no identity', async () => {
      op.setAccount('erin', { email: 'erin@example.com', email_verified: true, name: 'Erin' });
      const successBefore = await logins('success');
      const undo = await refuseInserts(t, 'audit_log', 'action', 'user.create');
      try {
        await clearAudit(t);
        const res = await signIn('erin', '192.0.2.16');
        assert.equal(res.statusCode, 500);
      } finally {
        await undo();
      }
      assert.equal((await auditEntries(t)).length, 0);
      assert.deepEqual(await countFor(t, 'erin@example.com', 'erin'), { users: 0, identities: 0 });
      assert.equal(await logins('success'), successBefore);
    });
  });
}
