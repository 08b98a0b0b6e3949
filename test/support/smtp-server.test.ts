import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { createTransport } from 'nodemailer';
import { startSmtpServer } from './smtp-server.ts';

// A raw SMTP dialogue, to pin the harness's own parsing without nodemailer's encoder choices.
function talk(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let transcript = '';
    let sent = 0;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      transcript += chunk;
      // One command per complete reply (a reply's last line has a space after the code).
      while (sent < lines.length && (transcript.match(/^\d{3} /gm) ?? []).length > sent) {
        socket.write(`${lines[sent]}\r\n`);
        sent++;
      }
      if (sent === lines.length && /^221 /m.test(transcript)) socket.end();
    });
    socket.on('end', () => resolve(transcript));
    socket.on('error', reject);
  });
}

describe('SMTP test harness', () => {
  it('without auth: no credentials in the url, AUTH not offered, messages recorded', async () => {
    const smtp = await startSmtpServer();
    try {
      assert.equal(smtp.url, `smtp://127.0.0.1:${smtp.port}`);
      const ehlo = await talk(smtp.port, ['EHLO client.test', 'QUIT']);
      assert.match(ehlo, /^250[ -]/m);
      assert.doesNotMatch(ehlo, /AUTH|STARTTLS/);
      const mailer = createTransport({ url: smtp.url, logger: false });
      await mailer.sendMail({ from: 'a@x.test', to: 'b@y.test', subject: 'hi', text: 'plain' });
      mailer.close();
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail?.user, null);
      assert.equal(mail?.subject, 'hi');
      // SMTP data must end in CRLF, so a single-part body arrives with the line break nodemailer
      // added; only multipart bodies can end exactly (their last CRLF belongs to the boundary).
      assert.equal(mail?.text, 'plain\n');
      assert.equal(mail?.html, null);
    } finally {
      await smtp.stop();
    }
  });

  it('decodes a hand-written multipart with quoted-printable, base64 and split encoded words', async () => {
    const smtp = await startSmtpServer();
    try {
      const html = Buffer.from('<p>Grüße, 世界</p>\r\n').toString('base64');
      const message = [
        'From: a@x.test',
        'To: =?ISO-8859-1?Q?Andr=E9?= <b@y.test>',
        'Subject: =?UTF-8?B?5L2g?=  =?UTF-8?B?5aW9?= and =?utf-8?q?caf=C3=A9_bar?=',
        'Content-Type: multipart/mixed; boundary="outer"',
        '',
        'preamble',
        '--outer',
        'Content-Type: multipart/alternative;',
        ' boundary=inner',
        '',
        '--inner',
        'Content-Type: text/plain; charset="utf-8"',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'Zo=C3=AB, a long line that was soft=',
        ' broken =3D done.  ',
        '..leading dot',
        '--inner',
        'Content-Type: text/html; charset=utf-8',
        'Content-Transfer-Encoding: base64',
        '',
        html,
        '--inner--',
        '--outer',
        'Content-Type: text/plain',
        'Content-Disposition: attachment; filename="a.txt"',
        '',
        'not the body',
        '--outer--',
        'epilogue',
        '.',
      ];
      const transcript = await talk(smtp.port, [
        'EHLO client.test',
        'MAIL FROM:<a@x.test>',
        'RCPT TO:<b@y.test>',
        'DATA',
        message.join('\r\n'),
        'QUIT',
      ]);
      assert.match(transcript, /^250 .*queued/im);
      const [mail] = await smtp.waitFor(1);
      assert.deepEqual(mail?.envelope, { from: 'a@x.test', to: ['b@y.test'] });
      assert.equal(mail?.to, 'André <b@y.test>');
      assert.equal(mail?.subject, '你好 and café bar');
      assert.equal(mail?.text, 'Zoë, a long line that was soft broken = done.\n.leading dot');
      assert.equal(mail?.html, '<p>Grüße, 世界</p>\n');
    } finally {
      await smtp.stop();
    }
  });

  it('offers AUTH without STARTTLS, requires the configured credentials, and restarts on the same port', async () => {
    const smtp = await startSmtpServer({ auth: { user: 'u', pass: 'p w' } });
    try {
      assert.equal(smtp.url, `smtp://u:p%20w@127.0.0.1:${smtp.port}`);
      const ehlo = await talk(smtp.port, ['EHLO client.test', 'QUIT']);
      assert.match(ehlo, /^250[ -]AUTH PLAIN LOGIN/m);
      assert.doesNotMatch(ehlo, /STARTTLS/);
      const anonymous = createTransport({ host: '127.0.0.1', port: smtp.port, logger: false });
      await assert.rejects(anonymous.sendMail({ from: 'a@x.test', to: 'b@y.test', text: 'x' }));
      anonymous.close();
      const port = smtp.port;
      await smtp.stop();
      await smtp.start();
      assert.equal(smtp.port, port);
      const mailer = createTransport({ url: smtp.url, logger: false });
      await mailer.sendMail({ from: 'a@x.test', to: 'b@y.test', text: 'x' });
      mailer.close();
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail?.user, 'u');
    } finally {
      await smtp.stop();
    }
  });

  it('waitFor rejects when too few messages arrive', async () => {
    const smtp = await startSmtpServer();
    try {
      await assert.rejects(smtp.waitFor(1, 50), /expected 1 message\(s\), got 0/);
    } finally {
      await smtp.stop();
    }
  });
});
