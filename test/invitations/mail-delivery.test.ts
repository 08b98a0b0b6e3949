import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enqueueMail } from '../../src/platform/mail/outbox.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';
import {
  type InviteResponseBody,
  invite,
  mailerHealth,
  outboxRows,
  pause,
  STRONG_PASSWORD,
  setPassword,
  tokenOf,
  waitUntil,
} from './helpers.ts';

// Retries come after ½–1 s, 1–2 s, … so a test waits seconds, not minutes, for SMTP to come back.
const ENV = { API_FORM: 'B', MAIL_RETRY_BASE_S: '1' };

function received(smtp: SmtpHarness, to: string) {
  return smtp.messages.filter((m) => m.envelope.to.includes(to));
}

async function outboxRowFor(t: TestApp, recipient: string) {
  return t.ctx.db.selectFrom('outbox').selectAll().where('recipient', '=', recipient).executeTakeFirst();
}

for (const dialect of DIALECTS) {
  describe(`invitation mail delivery [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let admin: Record<string, string>;

    before(async () => {
      smtp = await startSmtpServer();
      t = await buildTestApp(dialect, { env: { ...ENV, SMTP_URL: smtp.url } });
      admin = await authHeaders(t, await createUser(t, { role: 'admin', name: 'Ada' }));
    });
    after(async () => {
      await t.destroy();
      await smtp.stop();
    });

    it('answers 201 while SMTP is down and delivers the mail exactly once when it is back', async () => {
      await smtp.stop();
      const res = await invite(t, admin, { email: 'down@example.com' });
      assert.equal(res.statusCode, 201, res.body);
      const body = json<InviteResponseBody>(res);
      const failed = await waitUntil(async () => {
        const row = await outboxRowFor(t, 'down@example.com');
        return row && row.attempts >= 1 ? row : null;
      }, 'a failed attempt');
      assert.equal(failed.status, 'pending');
      // nodemailer reports a refused connection as ESOCKET (ECONNECTION in some versions).
      assert.match(failed.last_error ?? '', /^(ESOCKET|ECONNECTION): SMTP delivery failed/);
      assert.ok(failed.next_attempt_at > (failed.last_attempt_at ?? 0), 'a retry is scheduled later');
      const down = await mailerHealth(t);
      assert.equal(down.status, 'error');
      assert.equal(down.pending, 1);
      assert.equal(down.last_error, failed.last_error?.split(':')[0]);
      assert.ok(!JSON.stringify(down).includes('127.0.0.1'), 'no SMTP address in the public health');
      const detailed = await t.app.inject({ url: '/health/detailed' });
      assert.equal(detailed.statusCode, 503);
      assert.equal(json(detailed).status, 'degraded');

      await smtp.start();
      await waitUntil(() => received(smtp, 'down@example.com').length > 0, 'the mail after SMTP is back');
      const sent = await waitUntil(async () => {
        const row = await outboxRowFor(t, 'down@example.com');
        return row?.status === 'sent' ? row : null;
      }, 'the row marked sent');
      assert.ok(sent.attempts >= 2);
      // Give a duplicate every chance to show up: several more worker passes.
      await pause(2_500);
      const mails = received(smtp, 'down@example.com');
      assert.equal(mails.length, 1, 'delivered exactly once');
      assert.ok(mails[0]?.text?.includes(body.invitation.invite_url));
      const up = await mailerHealth(t);
      assert.equal(up.status, 'ok');
      assert.equal(up.pending, 0);
      // The invitation itself never depended on the mail.
      assert.equal((await setPassword(t, tokenOf(body), STRONG_PASSWORD)).statusCode, 200);
    });

    it('a re-invite while the first mail is still waiting sends only the new link', async () => {
      await smtp.stop();
      const first = json<InviteResponseBody>(await invite(t, admin, { email: 'again@example.com' }));
      await waitUntil(
        async () => ((await outboxRowFor(t, 'again@example.com'))?.attempts ?? 0) >= 1,
        'an attempt',
      );
      const second = json<InviteResponseBody>(await invite(t, admin, { email: 'again@example.com' }));
      await smtp.start();
      await waitUntil(() => received(smtp, 'again@example.com').length > 0, 'the mail');
      await waitUntil(async () => (await mailerHealth(t)).pending === 0, 'nothing pending');
      await pause(1_500);
      const mails = received(smtp, 'again@example.com');
      assert.equal(mails.length, 1);
      assert.ok(mails[0]?.text?.includes(second.invitation.invite_url));
      assert.ok(!mails[0]?.text?.includes(tokenOf(first)));
    });

    it('delivers pending messages after a restart', async () => {
      await smtp.stop();
      const res = await invite(t, admin, { email: 'restart@example.com' });
      assert.equal(res.statusCode, 201, res.body);
      await waitUntil(
        async () => ((await outboxRowFor(t, 'restart@example.com'))?.attempts ?? 0) >= 1,
        'a failed attempt',
      );
      await t.close();
      await smtp.start();
      const restarted = await t.restart();
      try {
        await waitUntil(() => received(smtp, 'restart@example.com').length > 0, 'the mail after the restart');
        await waitUntil(
          async () => (await outboxRowFor(restarted, 'restart@example.com'))?.status === 'sent',
          'the row marked sent',
        );
        await pause(1_500);
        assert.equal(received(smtp, 'restart@example.com').length, 1);
      } finally {
        await restarted.close();
      }
      // Later tests go on with a running instance on the same database.
      const first = t;
      const next = await first.restart();
      t = {
        ...next,
        destroy: async () => {
          await next.close();
          await first.destroy();
        },
      };
      admin = await authHeaders(t, await createUser(t, { role: 'admin' }));
    });

    it('retries a message whose claim was left behind by a crashed instance once its lease ran out', async () => {
      const now = Date.now();
      await t.ctx.db.transaction().execute(async (trx) => {
        const id = await enqueueMail(
          trx,
          { to: 'orphan@example.com', subject: 'orphan', text: 'orphan', html: '<p>orphan</p>' },
          'test',
        );
        await trx
          .updateTable('outbox')
          .set({ locked_by: 'crashed-instance', locked_until: now - 1 })
          .where('id', '=', id)
          .execute();
      });
      await waitUntil(() => received(smtp, 'orphan@example.com').length > 0, 'the orphaned mail');
      await waitUntil(async () => (await outboxRowFor(t, 'orphan@example.com'))?.status === 'sent', 'sent');
      assert.equal(received(smtp, 'orphan@example.com').length, 1);
    });

    it('gives up at once on a permanent refusal of the message, keeping nothing of its body', async () => {
      await t.ctx.db
        .transaction()
        .execute((trx) =>
          enqueueMail(
            trx,
            { to: 'two@example.com, three@example.com', subject: 's', text: 't', html: 'h' },
            'test',
          ),
        );
      t.ctx.mail.outbox.nudge();
      const row = await waitUntil(async () => {
        const r = await outboxRowFor(t, 'two@example.com, three@example.com');
        return r?.status === 'failed' ? r : null;
      }, 'the message given up');
      assert.equal(row.attempts, 1);
      assert.equal(row.text_body, '');
      assert.equal(row.html_body, '');
      assert.ok(row.last_error?.startsWith('EENVELOPE'));
      const health = await mailerHealth(t);
      assert.equal(health.failed_24h, 1);
      assert.equal(health.last_error, 'EENVELOPE');
      // The newest attempt failed: the mailer says so until a delivery succeeds again.
      assert.equal(health.status, 'error');
      const res = await invite(t, admin, { email: 'after-failure@example.com' });
      assert.equal(res.statusCode, 201);
      await waitUntil(() => received(smtp, 'after-failure@example.com').length > 0, 'the next mail');
      await waitUntil(async () => (await mailerHealth(t)).status === 'ok', 'the mailer healthy again');
    });

    it('two instances on one database deliver every message exactly once', async () => {
      const other = await t.restart();
      try {
        const otherAdmin = await authHeaders(other, await createUser(other, { role: 'admin' }));
        const recipients = Array.from({ length: 40 }, (_, i) => `pair-${i}@example.com`);
        // Half through each instance, all at once; each instance's enqueue wakes its own worker.
        const responses = await Promise.all(
          recipients.map((email, i) =>
            i % 2 === 0 ? invite(t, admin, { email }) : invite(other, otherAdmin, { email }),
          ),
        );
        for (const r of responses) assert.equal(r.statusCode, 201, r.body);
        // And a burst written without a nudge, which both pollers find at about the same time.
        const burst = Array.from({ length: 40 }, (_, i) => `burst-${i}@example.com`);
        await t.ctx.db.transaction().execute(async (trx) => {
          for (const to of burst)
            await enqueueMail(trx, { to, subject: 'burst', text: 'b', html: 'b' }, 'test');
        });
        const all = [...recipients, ...burst];
        await waitUntil(() => all.every((to) => received(smtp, to).length > 0), 'every message', 20_000);
        await waitUntil(
          async () => (await outboxRows(t)).every((r) => r.status !== 'pending'),
          'every row marked',
          10_000,
        );
        await pause(2_500);
        for (const to of all) assert.equal(received(smtp, to).length, 1, to);
        const rows = (await outboxRows(t)).filter((r) => all.includes(r.recipient));
        assert.equal(rows.length, all.length);
        for (const r of rows) {
          assert.equal(r.status, 'sent');
          assert.equal(r.attempts, 1);
        }
      } finally {
        await other.close();
      }
    });
  });
}
