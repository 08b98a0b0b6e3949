import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Database, migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { MailDeliveryError } from '../../src/platform/mail/mailer.ts';
import { claimDueMessages } from '../../src/platform/mail/outbox.queries.ts';
import {
  describeFailure,
  enqueueMail,
  isFinalFailure,
  retryDelayMs,
} from '../../src/platform/mail/outbox.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { mailerHealth, waitUntil } from '../invitations/helpers.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';

const message = (to: string) => ({ to, subject: 'hello', text: 'hello', html: '<p>hello</p>' });

describe('outbox retry policy', () => {
  it('backs off exponentially with jitter between half and the full delay, capped at an hour', () => {
    assert.equal(
      retryDelayMs(1, 10_000, () => 0),
      5_000,
    );
    assert.equal(
      retryDelayMs(1, 10_000, () => 1),
      10_000,
    );
    assert.equal(
      retryDelayMs(2, 10_000, () => 1),
      20_000,
    );
    assert.equal(
      retryDelayMs(5, 10_000, () => 1),
      160_000,
    );
    assert.equal(
      retryDelayMs(40, 10_000, () => 1),
      3_600_000,
    );
    assert.equal(
      retryDelayMs(40, 10_000, () => 0),
      1_800_000,
    );
  });

  it('gives up on permanent refusals except authentication, and after the last attempt', () => {
    const refused = new MailDeliveryError('550 no such user', {
      code: 'EENVELOPE',
      responseCode: 550,
      permanent: true,
    });
    const auth = new MailDeliveryError('535 bad credentials', {
      code: 'EAUTH',
      responseCode: 535,
      permanent: true,
    });
    const down = new MailDeliveryError('connect ECONNREFUSED', { code: 'ESOCKET' });
    assert.equal(isFinalFailure(refused, 1, 25), true);
    assert.equal(isFinalFailure(auth, 1, 25), false);
    assert.equal(isFinalFailure(down, 24, 25), false);
    assert.equal(isFinalFailure(down, 25, 25), true);
    assert.equal(describeFailure(auth), 'EAUTH 535: 535 bad credentials');
    assert.equal(describeFailure(new TypeError('secret-ish detail')), 'INTERNAL: TypeError');
    assert.equal(describeFailure(new MailDeliveryError('x'.repeat(900))).length, 500);
  });
});

for (const dialect of DIALECTS) {
  describe(`outbox claims [${dialect}]`, () => {
    let testDb: TestDatabase;
    let database: Database;

    before(async () => {
      testDb = await createTestDatabase(dialect);
      database = openDatabase(testDb.url);
      await migrateToLatest(database.db);
    });
    after(async () => {
      await database.close();
      await testDb.drop();
    });

    it('lets concurrent workers claim disjoint sets, and skips live leases and future attempts', async () => {
      const { db } = database;
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 60; i++) await enqueueMail(trx, message(`claim-${i}@example.com`), 'test');
      });
      const now = Date.now();
      const held = await enqueueMail(db, message('held@example.com'), 'test');
      await db
        .updateTable('outbox')
        .set({ locked_by: 'other', locked_until: now + 60_000 })
        .where('id', '=', held)
        .execute();
      const later = await enqueueMail(db, message('later@example.com'), 'test');
      await db
        .updateTable('outbox')
        .set({ next_attempt_at: now + 60_000 })
        .where('id', '=', later)
        .execute();

      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, w) =>
          claimDueMessages(db, { now: Date.now(), leaseUntil: now + 300_000, workerId: `w${w}`, limit: 10 }),
        ),
      );
      const ids = claims.flat().map((r) => r.id);
      assert.equal(new Set(ids).size, ids.length, 'no message claimed twice');
      assert.equal(ids.length, 60, 'every due message claimed');
      assert.ok(!ids.includes(held) && !ids.includes(later));
      for (const [w, rows] of claims.entries()) for (const r of rows) assert.equal(r.locked_by, `w${w}`);

      // Nothing left while the leases live; everything again once they ran out.
      assert.deepEqual(
        await claimDueMessages(db, { now: Date.now(), leaseUntil: now, workerId: 'x', limit: 100 }),
        [],
      );
      const expired = await claimDueMessages(db, {
        now: now + 300_001,
        leaseUntil: now + 600_000,
        workerId: 'y',
        limit: 100,
      });
      assert.equal(expired.length, 62, 'the 60, the one whose other lease ran out and the one now due');
    });
  });

  describe(`outbox worker [${dialect}]`, () => {
    let smtp: SmtpHarness;
    before(async () => {
      smtp = await startSmtpServer({ auth: { user: 'mailer', pass: 'right-password' } });
    });
    after(() => smtp.stop());

    it('keeps retrying through an authentication failure, then gives up after MAIL_MAX_ATTEMPTS', async () => {
      const badUrl = smtp.url.replace('right-password', 'wrong-password');
      const t: TestApp = await buildTestApp(dialect, {
        env: { SMTP_URL: badUrl, MAIL_MAX_ATTEMPTS: '2', MAIL_RETRY_BASE_S: '1' },
      });
      try {
        const id = await t.ctx.db
          .transaction()
          .execute((trx) => enqueueMail(trx, message('auth@example.com'), 'test'));
        t.ctx.mail.outbox.nudge();
        const row = () =>
          t.ctx.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const first = await waitUntil(async () => {
          const r = await row();
          return r.attempts >= 1 ? r : null;
        }, 'the first attempt');
        assert.equal(first.status, 'pending', 'a 535 is not the message’s fault: retried');
        assert.match(first.last_error ?? '', /^EAUTH 535: /);
        assert.ok(!first.last_error?.includes('wrong-password'));
        const health = await mailerHealth(t);
        assert.equal(health.status, 'error');
        assert.equal(health.last_error, 'EAUTH 535');
        assert.ok(!JSON.stringify(health).includes('wrong-password'));
        const last = await waitUntil(async () => {
          const r = await row();
          return r.status === 'failed' ? r : null;
        }, 'the message given up');
        assert.equal(last.attempts, 2);
        assert.equal(last.text_body, '');
        assert.equal(smtp.messages.length, 0);
      } finally {
        await t.destroy();
      }
    });

    it('without SMTP_URL writes mail to the log and reports the log transport as ok', async () => {
      const logLines: string[] = [];
      const t = await buildTestApp(dialect, { env: { LOG_LEVEL: 'info' }, logLines });
      try {
        const id = await t.ctx.db
          .transaction()
          .execute((trx) => enqueueMail(trx, message('log@example.com'), 'test'));
        t.ctx.mail.outbox.nudge();
        await waitUntil(
          async () =>
            (await t.ctx.db.selectFrom('outbox').select('status').where('id', '=', id).executeTakeFirst())
              ?.status === 'sent',
          'the message logged',
        );
        const logged = logLines.map((l) => JSON.parse(l) as { mail?: { to: string; text: string } });
        assert.ok(logged.some((l) => l.mail?.to === 'log@example.com' && l.mail.text === 'hello'));
        // No SMTP_URL: the mailer check is "not configured" (docs/api.md §4) and does not fail the whole.
        assert.deepEqual(await mailerHealth(t), { status: 'disabled' });
        const detailed = await t.app.inject({ url: '/health/detailed' });
        assert.equal(json(detailed).status, 'ok');
      } finally {
        await t.destroy();
      }
      // Regression: one message logged "mail not sent" (the log transport) and then "mail sent"
      // (the outbox). Read after destroy(), which waits for the outbox's pass to end.
      const about = logLines
        .map((l) => JSON.parse(l) as { msg: string; mail?: { to: string }; outbox_id?: string })
        .filter((l) => l.mail?.to === 'log@example.com' || /^mail /.test(l.msg));
      assert.deepEqual(
        about.map((l) => l.msg),
        ['mail not sent: no SMTP_URL configured (log transport, development only)'],
      );
    });
  });
}
