import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  escapeHtml,
  formatReadableUtc,
  renderInvitationMail,
  singleLine,
} from '../../src/platform/mail/templates.ts';

const base = {
  to: 'ada@example.com',
  inviteUrl: 'https://gatehouse.test/invite/Q2hhbmdlIG1lIHBsZWFzZQ_-abc?x=1&y=2',
  expiresAt: new Date('2030-01-02T03:04:05.000Z'),
};

describe('escapeHtml', () => {
  it('escapes the five HTML-significant characters and nothing else', () => {
    assert.equal(
      escapeHtml(`<a href="x" title='y'>&amp;</a>`),
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    assert.equal(escapeHtml('Zoë Ångström 🎉'), 'Zoë Ångström 🎉');
  });
});

describe('singleLine', () => {
  it('removes CR, LF, other control and bidi-override characters and collapses spaces', () => {
    assert.equal(singleLine(' Eve\r\nBcc: x@y\t\u0000z \u202Egnp.exe '), 'Eve Bcc: x@y z gnp.exe');
  });

  it('bounds the length without splitting a surrogate pair', () => {
    const out = singleLine('🎉'.repeat(100), 10);
    assert.equal(Array.from(out).length, 10);
    assert.ok(out.endsWith('…'));
    assert.doesNotMatch(out, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});

describe('formatReadableUtc', () => {
  it('spells the date in UTC', () => {
    assert.equal(formatReadableUtc(new Date('2030-01-02T03:04:05Z')), 'Wednesday, 2 January 2030, 03:04 UTC');
    assert.equal(
      formatReadableUtc(new Date('2025-11-28T23:59:59.999Z')),
      'Friday, 28 November 2025, 23:59 UTC',
    );
  });
});

describe('renderInvitationMail', () => {
  it('puts link, inviter, and expiry (ISO and readable) in both bodies', () => {
    const msg = renderInvitationMail({ ...base, inviterName: 'Zoë Ångström', productName: 'Acme Portal' });
    assert.equal(msg.to, 'ada@example.com');
    assert.equal(msg.subject, 'Zoë Ångström invited you to Acme Portal');
    for (const needle of [
      base.inviteUrl,
      'Zoë Ångström',
      'Acme Portal',
      '2030-01-02T03:04:05.000Z',
      'Wednesday, 2 January 2030, 03:04 UTC',
    ]) {
      assert.ok(msg.text.includes(needle), `text lacks ${needle}`);
    }
    const escapedUrl = 'https://gatehouse.test/invite/Q2hhbmdlIG1lIHBsZWFzZQ_-abc?x=1&amp;y=2';
    assert.ok(msg.html.includes(`href="${escapedUrl}"`));
    for (const needle of [
      'Zoë Ångström',
      'Acme Portal',
      '2030-01-02T03:04:05.000Z',
      'Wednesday, 2 January 2030, 03:04 UTC',
    ]) {
      assert.ok(msg.html.includes(needle), `html lacks ${needle}`);
    }
  });

  it('defaults the product name to Gatehouse and words a missing inviter neutrally', () => {
    const msg = renderInvitationMail({ ...base, inviterName: null });
    assert.equal(msg.subject, 'You have been invited to Gatehouse');
    assert.ok(msg.text.includes('You have been invited to join Gatehouse.'));
    assert.ok(!msg.text.includes('null'));
    assert.ok(!msg.html.includes('null'));
  });

  it('escapes all user-supplied text in the html body', () => {
    const msg = renderInvitationMail({
      ...base,
      to: 'a"<b>@example.com',
      inviterName: '<script>alert("x")</script>',
      productName: '<img src=x onerror=alert(1)>',
    });
    assert.ok(!msg.html.includes('<script'));
    assert.ok(!msg.html.includes('<img'));
    assert.ok(!msg.html.includes('a"<b>'));
    assert.ok(msg.html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
    assert.ok(msg.html.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(msg.html.includes('a&quot;&lt;b&gt;@example.com'));
  });

  it('keeps CR/LF from user text out of the subject and off their own text lines', () => {
    const msg = renderInvitationMail({
      ...base,
      inviterName: 'Eve\r\nBcc: victim@evil.test\r\n\r\nfake body',
      productName: 'Acme\nPortal',
    });
    assert.ok(!/[\r\n]/.test(msg.subject));
    assert.equal(msg.subject, 'Eve Bcc: victim@evil.test fake body invited you to Acme Portal');
    assert.ok(
      msg.text.includes('Eve Bcc: victim@evil.test fake body has invited you to join Acme Portal.\n'),
    );
    assert.ok(!msg.text.includes('\r'));
  });

  it('refuses a non-http(s) link and an invalid date', () => {
    assert.throws(
      () => renderInvitationMail({ ...base, inviterName: null, inviteUrl: 'javascript:alert(1)' }),
      TypeError,
    );
    assert.throws(
      () => renderInvitationMail({ ...base, inviterName: null, inviteUrl: '/invite/abc' }),
      TypeError,
    );
    assert.throws(
      () => renderInvitationMail({ ...base, inviterName: null, expiresAt: new Date('nope') }),
      RangeError,
    );
  });
});
