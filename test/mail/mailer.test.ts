import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import type { MailMessage, MailTransport } from '../../src/platform/mail/mailer.ts';
import { createMailTransport, MailDeliveryError } from '../../src/platform/mail/mailer.ts';
import { renderInvitationMail } from '../../src/platform/mail/templates.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

// Characters that must be percent-encoded in a URL, so both spellings of the password matter.
const USER = 'gatehouse@example.test';
const PASS = 'p@ss:w/rd%Sekret#1';
const FROM = 'Gatehouse <no-reply@gatehouse.test>';

function silentLogger() {
  const lines: { obj: object; msg: string }[] = [];
  return { lines, info: (obj: object, msg: string) => void lines.push({ obj, msg }) };
}

function assertNoPassword(text: string, pass: string): void {
  assert.ok(!text.includes(pass), `"${text}" contains the password`);
  assert.ok(!text.includes(encodeURIComponent(pass)), `"${text}" contains the encoded password`);
}

function invitation(inviterName: string | null, to = 'ada@example.com'): MailMessage {
  return renderInvitationMail({
    to,
    inviterName,
    inviteUrl: 'https://gatehouse.test/invite/Q2hhbmdlIG1lIHBsZWFzZQ_-abc',
    expiresAt: new Date('2030-01-02T03:04:05.000Z'),
  });
}

describe('SMTP transport', () => {
  let smtp: SmtpHarness;
  let mailer: MailTransport;

  before(async () => {
    smtp = await startSmtpServer({ auth: { user: USER, pass: PASS } });
    mailer = createMailTransport({ smtpUrl: smtp.url, from: FROM, logger: silentLogger() });
  });

  after(async () => {
    mailer.close();
    await smtp.stop();
  });

  it('is the smtp transport and verifies against the server', async () => {
    assert.equal(mailer.name, 'smtp');
    assert.deepEqual(await mailer.verify(), { ok: true });
  });

  it('delivers an invitation with to, subject, text and html intact (UTF-8 inviter name)', async () => {
    const msg = invitation('Zoë Ångström-Núñez');
    const seen = smtp.messages.length;
    await mailer.send(msg);
    const [received] = (await smtp.waitFor(seen + 1)).slice(seen);
    assert.ok(received);
    assert.equal(received.user, USER);
    assert.deepEqual(received.envelope.to, ['ada@example.com']);
    assert.equal(received.envelope.from, 'no-reply@gatehouse.test');
    assert.match(received.to, /ada@example\.com/);
    assert.equal(received.from, 'Gatehouse <no-reply@gatehouse.test>');
    assert.equal(received.subject, 'Zoë Ångström-Núñez invited you to Gatehouse');
    assert.equal(received.subject, msg.subject);
    assert.equal(received.text, msg.text);
    assert.equal(received.html, msg.html);
    assert.ok(received.text?.includes('Zoë Ångström-Núñez'));
    assert.ok(received.html?.includes('Zoë Ångström-Núñez'));
  });

  it('delivers mostly non-Latin text and long html lines intact', async () => {
    const msg: MailMessage = {
      to: 'kenji@example.jp',
      subject: '招待状: ようこそ、健二さん 🎉',
      text: 'こんにちは。\nこれは日本語のテキストです。\n\n— Gatehouse\n',
      html: `<p>${'長い行 long line '.repeat(40)}</p>\n<p>終わり</p>`,
    };
    const seen = smtp.messages.length;
    await mailer.send(msg);
    const [received] = (await smtp.waitFor(seen + 1)).slice(seen);
    assert.ok(received);
    assert.deepEqual(received.envelope.to, ['kenji@example.jp']);
    assert.equal(received.subject, msg.subject);
    assert.equal(received.text, msg.text);
    assert.equal(received.html, msg.html);
  });

  it('escapes a hostile inviter name in the delivered html and keeps it out of the headers', async () => {
    const msg = invitation('<script>alert("x")</script>\r\nBcc: victim@evil.test');
    const seen = smtp.messages.length;
    await mailer.send(msg);
    const [received] = (await smtp.waitFor(seen + 1)).slice(seen);
    assert.ok(received?.html);
    assert.ok(!received.html.includes('<script>'));
    assert.ok(received.html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
    assert.deepEqual(received.envelope.to, ['ada@example.com']);
    assert.equal(received.headers.bcc, undefined);
    assert.ok(!/[\r\n]/.test(received.subject));
    assert.equal(
      received.subject,
      '<script>alert("x")</script> Bcc: victim@evil.test invited you to Gatehouse',
    );
  });

  it('rejects with a password-free MailDeliveryError while the server is down, and works once it is back', async () => {
    await smtp.stop();
    try {
      await assert.rejects(mailer.send(invitation('Ada')), (err: unknown) => {
        assert.ok(err instanceof MailDeliveryError);
        assert.equal(err.permanent, false);
        assert.match(err.message, /^SMTP delivery failed: /);
        assertNoPassword(err.message, PASS);
        assertNoPassword(String(err.stack), PASS);
        return true;
      });
      const health = await mailer.verify();
      assert.equal(health.ok, false);
      assertNoPassword(health.error ?? '', PASS);
    } finally {
      await smtp.start();
    }
    const seen = smtp.messages.length;
    await mailer.send(invitation('Ada'));
    const [received] = (await smtp.waitFor(seen + 1)).slice(seen);
    assert.equal(received?.subject, 'Ada invited you to Gatehouse');
    assert.deepEqual(await mailer.verify(), { ok: true });
  });

  it('refuses anything but one bare recipient address before connecting, as a permanent failure', async () => {
    const seen = smtp.messages.length;
    for (const to of [
      'a@x.test, b@y.test',
      'Eve <e@x.test>',
      'a@x.test\r\nBcc: c@z.test',
      'no-at-sign',
      '',
    ]) {
      await assert.rejects(mailer.send({ ...invitation('Ada'), to }), (err: unknown) => {
        assert.ok(err instanceof MailDeliveryError);
        assert.equal(err.code, 'EENVELOPE');
        assert.equal(err.permanent, true);
        return true;
      });
    }
    assert.equal(smtp.messages.length, seen);
  });

  it('rejects a wrong password as a permanent auth failure without echoing it', async () => {
    const wrongPass = 'not-the:password/@%';
    const url = new URL(smtp.url);
    url.password = encodeURIComponent(wrongPass);
    const wrong = createMailTransport({ smtpUrl: url.href, from: FROM, logger: silentLogger() });
    try {
      await assert.rejects(wrong.send(invitation('Ada')), (err: unknown) => {
        assert.ok(err instanceof MailDeliveryError);
        assert.equal(err.code, 'EAUTH');
        assert.equal(err.responseCode, 535);
        assert.equal(err.permanent, true);
        assertNoPassword(err.message, wrongPass);
        return true;
      });
    } finally {
      wrong.close();
    }
  });

  it('fails an smtps:// URL against a plain-text server without leaking the password', async () => {
    const url = new URL(smtp.url);
    url.protocol = 'smtps:';
    const tls = createMailTransport({ smtpUrl: url.href, from: FROM, logger: silentLogger() });
    try {
      assert.equal(tls.name, 'smtp');
      const health = await tls.verify();
      assert.equal(health.ok, false);
      assertNoPassword(health.error ?? '', PASS);
    } finally {
      tls.close();
    }
  });
});

describe('SMTP transport against a server that echoes credentials', () => {
  const pass = 'echo-me:Sekret/42%';
  let server: SMTPServer;
  let port: number;

  before(async () => {
    // A misbehaving server quoting the password back in its 535 reply: the reply text ends up in
    // nodemailer's error message, so only our redaction keeps it out of logs.
    server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      disableReverseLookup: true,
      logger: false,
      closeTimeout: 100,
      onAuth(auth, _session, callback) {
        const echoed = Buffer.from(`\u0000${auth.username}\u0000${auth.password}`).toString('base64');
        callback(new Error(`rejected password ${auth.password} (${echoed})`));
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.server.address();
    assert.ok(address && typeof address === 'object');
    port = address.port;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('strips every form of the password from send and verify errors', async () => {
    const smtpUrl = `smtp://mailer:${encodeURIComponent(pass)}@127.0.0.1:${port}`;
    const mailer = createMailTransport({ smtpUrl, from: FROM, logger: silentLogger() });
    try {
      await assert.rejects(mailer.send(invitation('Ada')), (err: unknown) => {
        assert.ok(err instanceof MailDeliveryError);
        assert.match(err.message, /rejected password \[redacted\] \(\[redacted\]\)/);
        assertNoPassword(err.message, pass);
        return true;
      });
      const health = await mailer.verify();
      assert.equal(health.ok, false);
      assert.match(health.error ?? '', /\[redacted\]/);
      assertNoPassword(health.error ?? '', pass);
    } finally {
      mailer.close();
    }
  });
});

describe('createMailTransport configuration', () => {
  it('refuses a non-SMTP URL without echoing it', () => {
    assert.throws(
      () =>
        createMailTransport({ smtpUrl: 'http://u:Sekret42@mail.test', from: FROM, logger: silentLogger() }),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, /smtp:\/\/ or smtps:\/\//);
        assert.ok(!err.message.includes('Sekret42'));
        return true;
      },
    );
    assert.throws(
      () => createMailTransport({ smtpUrl: 'not a url Sekret42', from: FROM, logger: silentLogger() }),
      (err: unknown) => err instanceof Error && !err.message.includes('Sekret42'),
    );
  });
});

describe('log transport', () => {
  it('is chosen without SMTP_URL and logs to, subject and text at info', async () => {
    const logger = silentLogger();
    const mailer = createMailTransport({ from: FROM, logger });
    assert.equal(mailer.name, 'log');
    assert.deepEqual(await mailer.verify(), { ok: true });
    const msg = invitation('Zoë');
    await mailer.send(msg);
    assert.equal(logger.lines.length, 1);
    assert.deepEqual(logger.lines[0]?.obj, { mail: { to: msg.to, subject: msg.subject, text: msg.text } });
    assert.match(logger.lines[0]?.msg ?? '', /development/);
    mailer.close();
  });

  it('treats an empty SMTP_URL as absent', () => {
    const mailer = createMailTransport({ smtpUrl: '  ', from: FROM, logger: silentLogger() });
    assert.equal(mailer.name, 'log');
  });
});
