import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { v7 as uuidv7 } from 'uuid';
import { hashOpaqueToken, newOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { buildTestApp, json } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';
import { STRONG_PASSWORD, setPassword } from './helpers.ts';

// Migration 20261126080000_invitation_links moves invitation tokens into one_time_links (purpose
// `invitation`) and leaves `invitations` with role and inviter only. The hole it pins: a link mailed
// before the upgrade must still open and be accepted after it (ending in a session), and an old used,
// replaced or expired one must keep its 410 — not turn into 404 because its row was left behind.

const BEFORE = '20261126074000_oauth';
const DAY = 86_400_000;

function migratorOf(db: ReturnType<typeof openDatabase>['db']): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
}

for (const dialect of DIALECTS) {
  describe(`migration invitation_links [${dialect}]`, () => {
    it('an invitation issued on the old schema opens and is accepted after the upgrade; old dead ones keep their 410', async () => {
      const fresh = await createTestDatabase(dialect);
      const now = Date.now();
      const inviterId = uuidv7();
      const invitee = uuidv7();
      const late = uuidv7();
      const live = { id: uuidv7(), token: newOpaqueToken(), expiresAt: now + 3 * DAY };
      const replaced = { id: uuidv7(), token: newOpaqueToken() };
      const expired = { id: uuidv7(), token: newOpaqueToken() };
      const old = openDatabase(fresh.url);
      try {
        assert.equal((await migratorOf(old.db).migrateTo(BEFORE)).error, undefined);
        const user = (id: string, email: string, name: string, role: string, status: string) =>
          sql`insert into users (id, email, name, role, status, password_hash, email_verified, created_at, updated_at, last_login_at)
            values (${id}, ${email}, ${name}, ${role}, ${status}, null, 0, ${now}, ${now}, null)`.execute(
            old.db,
          );
        await user(inviterId, 'old-inviter@example.com', 'Old Inviter', 'admin', 'active');
        await user(invitee, 'before-upgrade@example.com', 'Ada', 'admin', 'invited');
        await user(late, 'late-before-upgrade@example.com', '', 'user', 'invited');
        const invitation = (
          id: string,
          userId: string,
          email: string,
          role: string,
          token: string,
          createdAt: number,
          expiresAt: number,
          replacedAt: number | null,
        ) =>
          sql`insert into invitations (id, user_id, email, role, token_hash, invited_by, created_at, expires_at, consumed_at, replaced_at)
            values (${id}, ${userId}, ${email}, ${role}, ${hashOpaqueToken(token)}, ${inviterId}, ${createdAt}, ${expiresAt}, null, ${replacedAt})`.execute(
            old.db,
          );
        const email = 'before-upgrade@example.com';
        await invitation(replaced.id, invitee, email, 'user', replaced.token, now - DAY, now + DAY, now - 1);
        await invitation(live.id, invitee, email, 'admin', live.token, now, live.expiresAt, null);
        await invitation(
          expired.id,
          late,
          'late-before-upgrade@example.com',
          'user',
          expired.token,
          now - 9 * DAY,
          now - DAY,
          null,
        );
      } finally {
        await old.close();
      }

      // The service migrates at start.
      const t = await buildTestApp(dialect, { database: fresh, env: { API_FORM: 'B' } });
      try {
        const columns = (await t.ctx.db.introspection.getTables()).find(
          (x) => x.name === 'invitations',
        )?.columns;
        assert.deepEqual(columns?.map((c) => c.name).sort(), ['id', 'invited_by', 'role']);
        const link = await t.ctx.db
          .selectFrom('one_time_links')
          .selectAll()
          .where('id', '=', live.id)
          .executeTakeFirstOrThrow();
        assert.equal(link.purpose, 'invitation');
        assert.equal(link.token_hash, hashOpaqueToken(live.token));
        assert.equal(link.user_id, invitee);

        const view = await t.app.inject({ url: `/api/v1/invite/${live.token}` });
        assert.equal(view.statusCode, 200, view.body);
        assert.deepEqual(json(view), {
          email: 'before-upgrade@example.com',
          name: 'Ada',
          role: 'admin',
          expires_at: new Date(live.expiresAt).toISOString(),
          invited_by: { name: 'Old Inviter' },
        });
        for (const [token, code] of [
          [replaced.token, 'invitation_used'],
          [expired.token, 'invitation_expired'],
        ] as const) {
          const dead = await t.app.inject({ url: `/api/v1/invite/${token}` });
          assert.equal(dead.statusCode, 410, dead.body);
          assert.equal(json(dead).code, code);
        }

        const accepted = await setPassword(t, live.token, STRONG_PASSWORD);
        assert.equal(accepted.statusCode, 200, accepted.body);
        const body = json<{ access_token: string; user: { id: string; status: string; role: string } }>(
          accepted,
        );
        assert.equal(body.user.id, invitee);
        assert.equal(body.user.status, 'active');
        assert.equal(body.user.role, 'admin');
        const me = await t.app.inject({
          url: '/api/v1/verify-token',
          headers: { authorization: `Bearer ${body.access_token}` },
        });
        assert.equal(me.statusCode, 200, 'the acceptance opened a session');
        const audit = await t.ctx.db
          .selectFrom('audit_log')
          .select(['target_id'])
          .where('action', '=', 'invitation.accept')
          .executeTakeFirstOrThrow();
        assert.equal(audit.target_id, live.id, 'the invitation keeps its id');
        const again = await setPassword(t, live.token, STRONG_PASSWORD);
        assert.equal(again.statusCode, 410);
        assert.equal(json(again).code, 'invitation_used');
      } finally {
        await t.close();
      }

      // Down again: the invitations table holds its tokens once more, state kept.
      const back = openDatabase(fresh.url);
      try {
        assert.equal((await migratorOf(back.db).migrateTo(BEFORE)).error, undefined, 'down');
        const rows = await sql<{
          id: string;
          token_hash: string;
          consumed_at: unknown;
          replaced_at: unknown;
        }>`
          select id, token_hash, consumed_at, replaced_at from invitations`.execute(back.db);
        const byId = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
        assert.deepEqual(
          rows.rows
            .map((r) => [r.id, r.token_hash, r.consumed_at !== null, r.replaced_at !== null])
            .sort(byId),
          [
            [replaced.id, hashOpaqueToken(replaced.token), false, true],
            [live.id, hashOpaqueToken(live.token), true, false],
            [expired.id, hashOpaqueToken(expired.token), false, false],
          ].sort(byId),
        );
        const links = await sql<{ n: number | string }>`select count(*) as n from one_time_links`.execute(
          back.db,
        );
        assert.equal(Number(links.rows[0]?.n), 0);
      } finally {
        await back.close();
        await fresh.drop();
      }
    });
  });
}
