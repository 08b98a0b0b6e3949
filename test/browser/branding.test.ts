import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_EMAIL,
  apiNotBuilt,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

/*
 * Branding never executes (docs/security.md Round 3; docs/pages.md): a hostile APP_NAME is shown as
 * text on every hosted page — in Chromium: no dialog, no injected element, no inline script run or
 * refused (a refused one would show as a CSP violation in the console) — and escaped in every mail's
 * HTML, while the text part and the subject carry it as plain text. Real SMTP server, real process.
 */

const HOSTILE = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`;
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;';
const NEWCOMER = 'newcomer@pages.test';
const SIGNUP = 'signup@pages.test';

describe('hostile APP_NAME in pages and mails (branding-xss)', {
  skip: skipWithoutChromium || apiNotBuilt('recovery', 'email', 'invitations', 'registration'),
}, () => {
  let stack: Stack;
  const api = (path: string, body: unknown) =>
    fetch(`${stack.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  before(async () => {
    stack = await startStack({ APP_NAME: HOSTILE });
    for (const m of ['invitations', 'recovery', 'email', 'registration'])
      await stack.adminApi('PUT', `/api/v1/admin/modules/${m}`, { enabled: true });
  });
  after(async () => {
    await stack?.close();
  });

  let links: { invitation: string; reset: string; verify: string };

  it('branding-xss-mails: every mail escapes APP_NAME in its HTML and carries it as text elsewhere', async () => {
    const invited = await stack.adminApi('POST', '/api/v1/users/invite', { email: NEWCOMER });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.equal((await api('/api/v1/password/forgot', { email: ADMIN_EMAIL })).status, 202);
    const signup = await api('/api/v1/signup', { email: SIGNUP, password: 'a sturdy sign-up passphrase 77' });
    assert.equal(signup.status, 202);
    links = {
      invitation: await linkFromMail(stack.smtp, NEWCOMER, '/account/invitation/'),
      reset: await linkFromMail(stack.smtp, ADMIN_EMAIL, '/account/reset-password/'),
      verify: await linkFromMail(stack.smtp, SIGNUP, '/account/verify-email/'),
    };
    const mails = stack.smtp.messages;
    assert.ok(mails.length >= 3);
    for (const mail of mails) {
      const label = `${mail.subject} → ${mail.envelope.to.join(',')}`;
      assert.ok(mail.html !== null, label);
      // No raw markup from the name anywhere in the HTML; where the name appears, it is escaped.
      assert.ok(!mail.html.includes('<script'), `${label}: raw <script> in the HTML`);
      assert.ok(!mail.html.includes('<img src=x'), `${label}: raw <img> in the HTML`);
      assert.ok(!/onerror=alert\(2\)>/.test(mail.html.replaceAll(ESCAPED, '')), label);
      if (mail.html.includes('alert(1)')) assert.ok(mail.html.includes(ESCAPED), `${label}: escaped`);
      // The text part is plain text: the name as it is (nothing there is interpreted).
      if ((mail.text ?? '').includes('alert(1)')) assert.ok((mail.text ?? '').includes(HOSTILE), label);
    }
    assert.ok(
      mails.some((m) => (m.html ?? '').includes(ESCAPED)),
      'the name appears (escaped) in at least one mail',
    );
  });

  it('branding-xss-pages: every page shows APP_NAME as text; nothing runs, nothing is injected', async () => {
    const paths = [
      '/account/sign-in',
      '/account',
      '/account/forgot-password',
      new URL(links.invitation).pathname,
      new URL(links.reset).pathname,
      new URL(links.verify).pathname,
      '/admin',
    ];
    for (const path of paths) {
      const tab = await openTab(stack);
      const dialogs: string[] = [];
      tab.page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const res = await tab.page.goto(`${stack.origin}${path}`);
      assert.equal(res?.status(), 200, path);
      await tab.page.waitForLoadState('networkidle');
      const dom = await tab.page.evaluate(() => ({
        brand: document.querySelector('header .brand span')?.textContent ?? null,
        title: document.title,
        injectedImages: document.querySelectorAll('img[src="x"], img[onerror]').length,
        inlineScripts: [...document.querySelectorAll('script')].filter((s) => !s.src).length,
        appNameData: document.body.dataset.appName ?? null,
      }));
      assert.deepEqual(dialogs, [], `${path}: a dialog fired`);
      assert.equal(dom.brand, HOSTILE, `${path}: the brand is the name as text`);
      assert.ok(dom.title.endsWith(HOSTILE), `${path}: title ${dom.title}`);
      assert.equal(dom.appNameData, HOSTILE, path);
      assert.equal(dom.injectedImages, 0, `${path}: an element was injected`);
      assert.equal(dom.inlineScripts, 0, `${path}: an inline script is in the page`);
      // A heading that names the app (sign-in, invitation) holds it as text too.
      const heading = await tab.page.locator('h1').first().textContent();
      if (heading?.includes('alert(1)')) assert.ok(heading.includes(HOSTILE), `${path}: heading ${heading}`);
      assertClean(tab);
      await tab.context.close();
    }
  });
});
