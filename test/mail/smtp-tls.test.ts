import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { createMailTransport, MailDeliveryError } from '../../src/platform/mail/mailer.ts';
import { renderInvitationMail } from '../../src/platform/mail/templates.ts';
import { type SmtpHarness, startSmtpServer } from '../support/smtp-server.ts';

const FROM = 'Gatehouse <no-reply@gatehouse.test>';
const logger = { info: () => {} };

/** A self-signed certificate for 127.0.0.1, as a mail server on a private network would have. */
function selfSigned(dir: string, name: string): { key: string; cert: string; certFile: string } {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2']
      .concat(['-keyout', keyFile, '-out', certFile, '-subj', '/CN=127.0.0.1'])
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

const message = () =>
  renderInvitationMail({
    to: 'ada@example.com',
    inviterName: null,
    inviteUrl: 'https://gatehouse.test/invite/abc',
    expiresAt: new Date('2030-01-02T03:04:05.000Z'),
  });

describe('SMTP server with a private certificate (SMTP_CA_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-smtp-tls-'));
  let smtp: SmtpHarness;
  let server: ReturnType<typeof selfSigned>;
  let stranger: ReturnType<typeof selfSigned>;

  before(async () => {
    server = selfSigned(dir, 'server');
    stranger = selfSigned(dir, 'stranger');
    smtp = await startSmtpServer({ tls: { key: server.key, cert: server.cert } });
  });
  after(async () => {
    await smtp.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is refused without SMTP_CA_FILE: the certificate is verified against the public CAs', async () => {
    const config = loadConfig({ SMTP_URL: smtp.url });
    const mailer = createMailTransport({ smtpUrl: config.smtpUrl ?? '', from: FROM, logger });
    try {
      await assert.rejects(mailer.send(message()), (err: unknown) => {
        assert.ok(err instanceof MailDeliveryError);
        assert.match(err.message, /self[- ]signed certificate/i);
        return true;
      });
    } finally {
      mailer.close();
    }
    assert.equal(smtp.messages.length, 0);
  });

  it('delivers with SMTP_CA_FILE naming the server certificate, verification still on', async () => {
    const config = loadConfig({ SMTP_URL: smtp.url, SMTP_CA_FILE: server.certFile });
    assert.equal(config.smtpCa, server.cert);
    const mailer = createMailTransport({
      smtpUrl: config.smtpUrl ?? '',
      ...(config.smtpCa ? { smtpCa: config.smtpCa } : {}),
      from: FROM,
      logger,
    });
    try {
      await mailer.send(message());
      assert.deepEqual(await mailer.verify(), { ok: true });
    } finally {
      mailer.close();
    }
    const [received] = await smtp.waitFor(1);
    assert.equal(received?.envelope.to[0], 'ada@example.com');
  });

  it('still refuses a server whose certificate SMTP_CA_FILE does not vouch for', async () => {
    const config = loadConfig({ SMTP_URL: smtp.url, SMTP_CA_FILE: stranger.certFile });
    const mailer = createMailTransport({
      smtpUrl: smtp.url,
      smtpCa: config.smtpCa ?? '',
      from: FROM,
      logger,
    });
    const before = smtp.messages.length;
    try {
      await assert.rejects(mailer.send(message()), MailDeliveryError);
    } finally {
      mailer.close();
    }
    assert.equal(smtp.messages.length, before);
  });

  it('a bad SMTP_CA_FILE stops the start with one line naming it', () => {
    const notPem = join(dir, 'not-pem.txt');
    writeFileSync(notPem, 'hello');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { SMTP_URL: smtp.url, SMTP_CA_FILE: join(dir, 'missing.pem') },
        /^SMTP_CA_FILE cannot be read: .*no such file$/,
      ],
      [{ SMTP_URL: smtp.url, SMTP_CA_FILE: notPem }, /^SMTP_CA_FILE must hold PEM certificates/],
      [{ SMTP_CA_FILE: server.certFile }, /^SMTP_CA_FILE is set but SMTP_URL is not$/],
    ];
    for (const [env, pattern] of cases) {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
      );
    }
  });
});
