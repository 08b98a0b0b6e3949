import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { pruneAudit } from '../../src/identity/audit.queries.ts';
import { type AuditEvent, recordAudit, recordAudits } from '../../src/identity/index.ts';
import { pruneExpiredAudit } from '../../src/modules/audit/audit.service.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

const DAY = 86_400_000;

interface Page {
  data: Array<Record<string, unknown> & { id: string; at: string; action: string }>;
  next_cursor: string | null;
}

for (const dialect of DIALECTS) {
  describe(`audit trail [${dialect}]`, () => {
    let t: TestApp;
    let adminHeaders: { authorization: string };
    let adminId: string;

    const entries = () => t.ctx.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
    const clear = () => t.ctx.db.deleteFrom('audit_log').execute();
    const audit = (query: string, headers = adminHeaders) =>
      t.app.inject({ url: `/api/v1/admin/audit${query}`, headers });
    const toggle = (name: string, enabled: boolean) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/v1/admin/modules/${name}`,
        headers: { ...adminHeaders, 'user-agent': 'audit-test/1.0' },
        payload: { enabled },
      });

    before(async () => {
      t = await buildTestApp(dialect);
      const admin = await firstAdmin(t);
      adminId = admin.id;
      adminHeaders = await authHeaders(t, admin);
    });
    after(() => t.destroy());

    it('is disabled by default: 404 module_disabled and absent from the index', async () => {
      const res = await audit('');
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'module_disabled');
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      assert.equal(index.documentation.admin?.audit, undefined);
    });

    it('a module toggle leaves exactly one entry with actor, target, client and details', async () => {
      await clear();
      const res = await toggle('audit', true);
      assert.equal(res.statusCode, 200);
      const rows = await entries();
      assert.equal(rows.length, 1);
      const [row] = rows;
      assert.ok(row);
      assert.equal(row.action, 'module.toggle');
      assert.equal(row.outcome, 'success');
      assert.equal(row.actor_type, 'user');
      assert.equal(row.actor_id, adminId);
      assert.equal(row.target_type, 'module');
      assert.equal(row.target_id, 'audit');
      assert.equal(row.ip, '127.0.0.1');
      assert.equal(row.user_agent, 'audit-test/1.0');
      assert.deepEqual(JSON.parse(row.details), { enabled: true, previous: false });
      assert.ok(row.at <= Date.now());

      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ url: '/' }),
      );
      assert.equal(index.documentation.admin?.audit, 'GET /api/v1/admin/audit');
    });

    it('a refused toggle (required module) leaves no entry', async () => {
      await clear();
      const res = await toggle('core', false);
      assert.equal(res.statusCode, 409);
      assert.equal((await entries()).length, 0);
    });

    it('a failed transaction leaves no entry (recorded, then thrown)', async () => {
      await clear();
      await assert.rejects(
        t.ctx.db.transaction().execute(async (trx) => {
          await recordAudit(trx, { action: 'user.delete', actor: { type: 'system' } });
          throw new Error('boom');
        }),
        /boom/,
      );
      // The toggle path too: the override and its entry commit together or not at all.
      await assert.rejects(
        t.ctx.modules.set('idp', false, async (trx) => {
          await recordAudit(trx, {
            action: 'module.toggle',
            actor: { type: 'user', id: adminId },
            target: { type: 'module', id: 'idp' },
          });
          throw new Error('after the audit');
        }),
        /after the audit/,
      );
      assert.equal((await entries()).length, 0);
      const override = await t.ctx.db
        .selectFrom('module_overrides')
        .selectAll()
        .where('name', '=', 'idp')
        .executeTakeFirst();
      assert.equal(override, undefined);
      assert.equal(t.ctx.modules.isEnabled('idp'), true);
    });

    it('rotate-keys (CLI) leaves exactly one keys.rotate entry naming the new key', async () => {
      await clear();
      const run = await runCli(['rotate-keys'], t.databaseUrl);
      assert.equal(run.code, 0, run.stderr);
      const rows = await entries();
      assert.equal(rows.length, 1);
      const [row] = rows;
      assert.ok(row);
      const current = await t.ctx.db
        .selectFrom('signing_keys')
        .select('kid')
        .where('retired_at', 'is', null)
        .executeTakeFirstOrThrow();
      assert.equal(row.action, 'keys.rotate');
      assert.equal(row.outcome, 'success');
      assert.equal(row.actor_type, 'system');
      assert.equal(row.actor_id, null);
      assert.equal(row.target_type, 'signing_key');
      assert.equal(row.target_id, current.kid);
      assert.ok(run.stdout.includes(current.kid));
    });

    it('never stores secret-looking details', async () => {
      await clear();
      await recordAudit(t.ctx.db, {
        action: 'password.change',
        actor: { type: 'anonymous' },
        details: {
          password: 'hunter2',
          nested: { refresh_token: 'abc', fields: ['name'] },
          email: 'a@b.co',
          otp: 123456,
          rehashed: true,
        },
      });
      const [row] = await entries();
      assert.ok(row);
      // Booleans under secret-looking keys stay: true/false reveals no secret.
      assert.deepEqual(JSON.parse(row.details), {
        password: '[redacted]',
        nested: { refresh_token: '[redacted]', fields: ['name'] },
        email: 'a@b.co',
        otp: '[redacted]',
        rehashed: true,
      });
    });

    describe('GET /api/v1/admin/audit', () => {
      const base = Date.UTC(2026, 0, 1);
      const target = uuidv7();
      const other = uuidv7();

      before(async () => {
        await clear();
        const events: AuditEvent[] = [];
        // 12 entries, two per millisecond (ties are ordered by id), alternating actors and actions.
        for (let i = 0; i < 12; i++) {
          events.push({
            at: base + Math.floor(i / 2),
            action: i % 3 === 0 ? 'login.failure' : 'user.update',
            outcome: i % 3 === 0 ? 'failure' : 'success',
            actor: i % 2 === 0 ? { type: 'user', id: adminId } : { type: 'anonymous' },
            target: { type: 'user', id: i < 4 ? target : other },
            client: { ip: '192.0.2.1', userAgent: null },
          });
        }
        await recordAudits(t.ctx.db, events);
      });

      it('pages newest first without skips or repeats, and ends with next_cursor null', async () => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res = await audit(`?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(res.statusCode, 200);
          const page = json<Page>(res);
          seen.push(...page.data.map((e) => e.id));
          cursor = page.next_cursor;
          pages++;
        } while (cursor !== null);
        assert.equal(pages, 3);
        const all = await t.ctx.db
          .selectFrom('audit_log')
          .select('id')
          .orderBy('at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        assert.deepEqual(
          seen,
          all.map((r) => r.id),
        );
      });

      // Gap: the console showed people as UUIDs; entries now carry the current address of the user
      // they name, and null for anything else or for an account that is gone (ids never guessed).
      it('names people: actor_email and target_email are current addresses, null once gone', async () => {
        const admin = await t.ctx.db
          .selectFrom('users')
          .select('email')
          .where('id', '=', adminId)
          .executeTakeFirstOrThrow();
        const data = json<Page>(await audit('?limit=100')).data;
        assert.equal(data.length, 12);
        for (const e of data) {
          assert.equal(e.actor_email, e.actor_type === 'user' ? admin.email : null);
          // target and other are ids of no account: deleted users keep their id, lose their address.
          assert.equal(e.target_email, null);
        }
        const grace = await createUser(t, { email: 'grace.audit@example.com' });
        await recordAudit(t.ctx.db, {
          action: 'user.update',
          outcome: 'success',
          actor: { type: 'system' },
          target: { type: 'user', id: grace.id },
          client: { ip: null, userAgent: null },
        });
        const named = json<Page>(await audit(`?target=${grace.id}`)).data;
        assert.equal(named.length, 1);
        assert.equal(named[0]?.target_email, 'grace.audit@example.com');
        assert.equal(named[0]?.actor_email, null);
        await t.ctx.db.deleteFrom('audit_log').where('target_id', '=', grace.id).execute();
      });

      it('filters by actor, target, action, outcome and time range', async () => {
        const byActor = json<Page>(await audit(`?actor=${adminId}`)).data;
        assert.equal(byActor.length, 6);
        assert.ok(byActor.every((e) => e.actor_id === adminId));

        const byTarget = json<Page>(await audit(`?target=${target}`)).data;
        assert.equal(byTarget.length, 4);
        assert.ok(byTarget.every((e) => e.target_id === target));

        const failures = json<Page>(await audit('?action=login.failure')).data;
        assert.equal(failures.length, 4);
        assert.ok(failures.every((e) => e.action === 'login.failure' && e.outcome === 'failure'));
        assert.equal(json<Page>(await audit('?outcome=failure')).data.length, 4);

        // from inclusive, to exclusive: milliseconds 1 and 2 → entries 2..5.
        const from = new Date(base + 1).toISOString();
        const to = new Date(base + 3).toISOString();
        const ranged = json<Page>(await audit(`?from=${from}&to=${to}`)).data;
        assert.equal(ranged.length, 4);
        assert.ok(ranged.every((e) => e.at >= from && e.at < to));

        const combined = json<Page>(
          await audit(`?actor=${adminId}&target=${target}&action=login.failure`),
        ).data;
        assert.equal(combined.length, 1);
      });

      it('pages within a filter', async () => {
        const first = json<Page>(await audit(`?target=${other}&limit=3`));
        assert.equal(first.data.length, 3);
        assert.ok(first.next_cursor);
        const rest = json<Page>(await audit(`?target=${other}&limit=10&cursor=${first.next_cursor}`));
        assert.equal(rest.data.length, 5);
        assert.equal(rest.next_cursor, null);
        const ids = new Set([...first.data, ...rest.data].map((e) => e.id));
        assert.equal(ids.size, 8);
      });

      it('refuses a tampered or foreign cursor, bad filters and unknown parameters with 400', async () => {
        const page = json<Page>(await audit('?limit=2'));
        const cursor = page.next_cursor;
        assert.ok(cursor);
        const decoded = Buffer.from(cursor, 'base64url').toString();
        const [at, id, check] = decoded.split('.');
        const tampered = [
          Buffer.from(`${Number(at) + 1}.${id}.${check}`).toString('base64url'),
          `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`,
          'not-a-cursor',
          Buffer.from('{"at":1}').toString('base64url'),
        ];
        for (const bad of tampered) {
          const res = await audit(`?cursor=${encodeURIComponent(bad)}`);
          assert.equal(res.statusCode, 400, bad);
          assert.equal(json(res).code, 'validation_failed');
        }
        for (const query of [
          '?action=login.nope',
          '?from=yesterday',
          `?from=${new Date(base + 5).toISOString()}&to=${new Date(base).toISOString()}`,
          '?limit=0',
          '?limit=101',
          '?bogus=1',
        ]) {
          const res = await audit(query);
          assert.equal(res.statusCode, 400, query);
          assert.equal(json(res).code, 'validation_failed');
        }
      });

      it('is for admins: 401 without a token, 403 for a user', async () => {
        assert.equal((await t.app.inject({ url: '/api/v1/admin/audit' })).statusCode, 401);
        const user = await createUser(t);
        const res = await audit('', await authHeaders(t, user));
        assert.equal(res.statusCode, 403);
        assert.equal(json(res).code, 'forbidden');
      });
    });

    describe('retention', () => {
      it('prunes entries older than AUDIT_RETENTION_DAYS, in batches, and keeps the rest', async () => {
        await clear();
        const now = Date.now();
        const old: AuditEvent[] = Array.from({ length: 7 }, (_, i) => ({
          at: now - 400 * DAY - i,
          action: 'logout',
          actor: { type: 'anonymous' },
        }));
        await recordAudits(t.ctx.db, [
          ...old,
          { at: now - 364 * DAY, action: 'logout', actor: { type: 'anonymous' } },
          { at: now, action: 'logout', actor: { type: 'anonymous' } },
        ]);
        // Small batches exercise the loop; the default retention is 365 days.
        assert.equal(await pruneAudit(t.ctx.db, now - 365 * DAY, 3), 7);
        assert.equal((await entries()).length, 2);
        await recordAudit(t.ctx.db, { at: now - 366 * DAY, action: 'logout', actor: { type: 'anonymous' } });
        assert.equal(await pruneExpiredAudit(t.ctx, now), 1);
        assert.equal((await entries()).length, 2);
      });
    });
  });
}
