import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { createOrganization } from '../organizations/invitations-helpers.ts';
import type { ReceivedMail, SmtpHarness } from '../support/smtp-server.ts';

// API §24: a mail goes in its recipient's `locale`, else the language of the request that caused it
// (Accept-Language), subject and body both, with Content-Language, <html lang dir> and links with
// ?lang=. Pins the mails that were English whatever the reader's language (sign-in by e-mail, the
// security notices, the organization invitation) and the confirmation / change / sign-up mails
// that ignored the asking request's language for an account without a `locale`.

const catalog = (tag: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`../../locales/${tag}.json`, import.meta.url), 'utf8'));
/** The longest run of a message's own words (between its arguments): what a mail in that language must show. */
const words = (tag: string, key: string): string => {
  const message = catalog(tag)[key];
  assert.ok(message, `${tag}: ${key}`);
  // Between braces stand the arguments (these messages have no nested ones): the text is the rest.
  const runs = message.split(/[{}]/).filter((_, i) => i % 2 === 0);
  return runs.map((run) => run.trim()).reduce((a, b) => (b.length > a.length ? b : a), '');
};

const PASSWORD = 'correct horse battery staple 42';

for (const dialect of DIALECTS) {
  describe(`mails in the reader's language [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let adminH: { authorization: string };

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect, { APP_NAME: 'Acme ID' }));
      adminH = await authHeaders(t, await firstAdmin(t));
    });
    after(() => t.destroy());

    /** The first mail to `to` whose subject has `subject`, waiting for it to arrive over SMTP. */
    async function mailTo(to: string, subject: string): Promise<ReceivedMail> {
      const deadline = Date.now() + 8_000;
      for (;;) {
        const found = smtp.messages.find((m) => m.envelope.to.includes(to) && m.subject.includes(subject));
        if (found) return found;
        if (Date.now() > deadline) {
          const got = smtp.messages.filter((m) => m.envelope.to.includes(to)).map((m) => m.subject);
          throw new Error(`no mail to ${to} with "${subject}"; got ${JSON.stringify(got)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    /** Subject and body in `tag`, the headers and markup of that language, dates in UTC. */
    function assertIn(mail: ReceivedMail, tag: string, subjectKey: string, bodyKey: string) {
      assert.ok(mail.subject.includes(words(tag, subjectKey)), `${tag} subject: ${mail.subject}`);
      assert.ok(mail.text?.includes(words(tag, bodyKey)), `${tag} text body: ${mail.text}`);
      assert.ok(mail.html?.includes(words(tag, bodyKey)), `${tag} html body`);
      assert.equal(mail.headers['content-language'], tag);
      const dir = tag === 'ar' ? 'rtl' : 'ltr';
      assert.match(mail.html ?? '', new RegExp(`<html lang="${tag}" dir="${dir}">`));
      assert.doesNotMatch(mail.text ?? '', /\{[a-z_]+\}/, 'no placeholder left');
    }

    async function userWith(email: string, locale: string | null, fields: { password?: string } = {}) {
      const user = await createUser(t, { email, ...fields });
      await t.ctx.db.updateTable('users').set({ locale }).where('id', '=', user.id).execute();
      return { ...user, locale } as UserRow;
    }

    it('the sign-in-by-e-mail mail: the account locale first, else Accept-Language', async () => {
      await userWith('signin-de@example.com', 'de');
      await userWith('signin-any@example.com', null);
      const ask = (email: string, language: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/login/email',
          headers: { 'accept-language': language },
          payload: { email },
        });
      assert.equal((await ask('signin-de@example.com', 'fr')).statusCode, 202);
      assert.equal((await ask('signin-any@example.com', 'ar, en;q=0.5')).statusCode, 202);

      const de = await mailTo('signin-de@example.com', words('de', 'mail.email_signin.subject'));
      assertIn(de, 'de', 'mail.email_signin.subject', 'mail.email_signin.p1');
      assert.match(de.text ?? '', /Ihr Anmeldecode lautet \d{6}\./);
      assert.match(de.text ?? '', /10 Minuten lang/);
      assert.match(de.text ?? '', /\/account\/sign-in\/email\/[A-Za-z0-9_-]+\?lang=de/);
      assert.match(de.text ?? '', / UTC/);

      const ar = await mailTo('signin-any@example.com', words('ar', 'mail.email_signin.subject'));
      assertIn(ar, 'ar', 'mail.email_signin.subject', 'mail.email_signin.p1');
      assert.match(ar.text ?? '', /\?lang=ar/);
    });

    it('the confirmation mail follows the asking request when the account has no locale', async () => {
      const user = await userWith('verify-nl@example.com', null);
      await t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', user.id).execute();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/email/verification',
        headers: { ...(await authHeaders(t, user)), 'accept-language': 'nl-BE, en;q=0.3' },
      });
      assert.equal(res.statusCode, 202, res.body);
      const mail = await mailTo('verify-nl@example.com', words('nl', 'mail.email_verify.subject'));
      assertIn(mail, 'nl', 'mail.email_verify.subject', 'mail.email_verify.p1');
      assert.match(mail.text ?? '', /\/account\/verify-email\/[A-Za-z0-9_-]+\?lang=nl/);
    });

    it('an address change: the link to the new address and the notice to the old one in the asking language; a taken address warns its owner in theirs', async () => {
      const user = await userWith('move-ja@example.com', null, { password: PASSWORD });
      await userWith('owner-it@example.com', 'it');
      const headers = { ...(await authHeaders(t, user)), 'accept-language': 'ja' };
      const change = (new_email: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/email/change',
          headers,
          payload: { new_email, current_password: PASSWORD },
        });
      assert.equal((await change('moved-ja@example.com')).statusCode, 202);
      const link = await mailTo('moved-ja@example.com', words('ja', 'mail.email_change.subject'));
      assertIn(link, 'ja', 'mail.email_change.subject', 'mail.email_change.p1');
      const notice = await mailTo(
        'move-ja@example.com',
        words('ja', 'mail.notice.email_change_requested.subject'),
      );
      assertIn(
        notice,
        'ja',
        'mail.notice.email_change_requested.subject',
        'mail.notice.email_change_requested.p2',
      );
      assert.ok(notice.text?.includes('moved-ja@example.com'), 'the new address is named');

      assert.equal((await change('owner-it@example.com')).statusCode, 202);
      const taken = await mailTo(
        'owner-it@example.com',
        words('it', 'mail.notice.email_change_to_taken.subject'),
      );
      assertIn(
        taken,
        'it',
        'mail.notice.email_change_to_taken.subject',
        'mail.notice.email_change_to_taken.p1',
      );
    });

    it('sign-up: the confirmation in the request language; the owner of a taken address gets the notice in their locale', async () => {
      const on = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/registration',
        headers: adminH,
        payload: { enabled: true },
      });
      assert.equal(on.statusCode, 200, on.body);
      await userWith('taken-pt@example.com', 'pt-BR');
      const signup = (email: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/signup',
          headers: { 'accept-language': 'es-MX' },
          payload: { email, password: PASSWORD },
        });
      assert.equal((await signup('new-es@example.com')).statusCode, 202);
      assert.equal((await signup('taken-pt@example.com')).statusCode, 202);
      const welcome = await mailTo('new-es@example.com', words('es', 'mail.signup.subject'));
      assertIn(welcome, 'es', 'mail.signup.subject', 'mail.signup.p1');
      const taken = await mailTo('taken-pt@example.com', words('pt-BR', 'mail.notice.signup_taken.subject'));
      assertIn(taken, 'pt-BR', 'mail.notice.signup_taken.subject', 'mail.notice.signup_taken.p2');
      assert.match(taken.text ?? '', /\/account\/reset-password[^\s]*lang=pt-BR/);
    });

    it('password changed by a reset link: the notice in the resetting request language', async () => {
      await userWith('reset-fr@example.com', null, { password: PASSWORD });
      const forgot = await t.app.inject({
        method: 'POST',
        url: '/api/v1/password/forgot',
        headers: { 'accept-language': 'fr-CA' },
        payload: { email: 'reset-fr@example.com' },
      });
      assert.equal(forgot.statusCode, 202, forgot.body);
      const reset = await mailTo('reset-fr@example.com', words('fr', 'mail.password_reset.subject'));
      const token = /reset-password\/([A-Za-z0-9_-]+)|token=([A-Za-z0-9_-]+)/.exec(reset.text ?? '');
      const value = token?.[1] ?? token?.[2];
      assert.ok(value, reset.text ?? '');
      const done = await t.app.inject({
        method: 'POST',
        url: `/api/v1/password/reset/${value}`,
        headers: { 'accept-language': 'fr' },
        payload: { password: `${PASSWORD} again` },
      });
      assert.equal(done.statusCode, 200, done.body);
      const notice = await mailTo(
        'reset-fr@example.com',
        words('fr', 'mail.notice.password_changed.subject'),
      );
      assertIn(notice, 'fr', 'mail.notice.password_changed.subject', 'mail.notice.password_changed.p2');
    });

    it("second-factor notices: the recipient's locale, else the causing request's language (an admin's reset)", async () => {
      const zh = await userWith('mfa-zh@example.com', 'zh-Hans');
      const any = await userWith('mfa-any@example.com', null);
      for (const user of [zh, any]) {
        const res = await t.app.inject({
          method: 'DELETE',
          url: `/api/v1/users/${user.id}/mfa`,
          headers: { ...adminH, 'accept-language': 'ar' },
        });
        assert.equal(res.statusCode, 204, res.body);
      }
      const chinese = await mailTo('mfa-zh@example.com', words('zh-Hans', 'mail.security.mfa_reset.subject'));
      assertIn(chinese, 'zh-Hans', 'mail.security.mfa_reset.subject', 'mail.security.mfa_reset.line');
      const arabic = await mailTo('mfa-any@example.com', words('ar', 'mail.security.mfa_reset.subject'));
      assertIn(arabic, 'ar', 'mail.security.mfa_reset.subject', 'mail.security.advice');
      assert.match(arabic.text ?? '', /UTC/);
    });

    it("the organization invitation: the invitee's locale, else the inviting request's language", async () => {
      const org = await createOrganization(t, { name: 'Ferrovia' });
      const subject = (await firstAdmin(t)).name.trim()
        ? 'mail.org_invitation.subject_by'
        : 'mail.org_invitation.subject';
      await userWith('org-zh@example.com', 'zh-Hans');
      const invite = (email: string) =>
        t.app.inject({
          method: 'POST',
          url: `/api/v1/organizations/${org.id}/invitations`,
          headers: { ...adminH, 'accept-language': 'it-CH' },
          payload: { email, roles: ['member'] },
        });
      const fresh = await invite('org-new@example.com');
      assert.equal(fresh.statusCode, 201, fresh.body);
      assert.equal((await invite('org-zh@example.com')).statusCode, 201);
      const italian = await mailTo('org-new@example.com', 'Ferrovia');
      assertIn(italian, 'it', subject, 'mail.org_invitation.open');
      assert.match(italian.subject, /Ferrovia.*Acme ID/);
      const url = json<{ invite_url: string }>(fresh).invite_url;
      assert.ok(
        italian.text?.includes(`${url}?lang=it`) || italian.text?.includes(`${url}&lang=it`),
        italian.text ?? '',
      );
      const zh = await mailTo('org-zh@example.com', 'Ferrovia');
      assertIn(zh, 'zh-Hans', subject, 'mail.org_invitation.open');
    });
  });
}
