import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { MessageKey } from '../i18n/index.ts';
import { renderAccountMail } from './layout.ts';
import { type MailLanguage, withLang } from './mail-language.ts';
import type { Outbox } from './outbox.ts';

/*
 * Security notices: one place that turns an event into a mail through the outbox, written in the
 * caller's transaction so the notice commits with the change it reports (or not at all). A module
 * only says what happened; adding a kind (say `totp_enabled`, `passkey_added`) is one entry below
 * and its `mail.notice.<kind>.*` messages in the catalogs (locales/<tag>.json).
 * Notices never carry a secret; a kind may carry one link (the sign-up notice's recovery link).
 */

interface NoticeData {
  /** For `email_changed` / `email_change_requested`: the new address. */
  newEmail?: string;
  /** A link the notice offers (e.g. to recover the account); its expiry is said in the mail. */
  link?: { url: string; expiresAt: Date };
}

interface NoticeSpec {
  subject: string;
  paragraphs: (data: NoticeData) => string[];
  /** The label of the notice's link, when it has one. */
  linkLabel?: string;
}

const IF_NOT_YOU =
  'If this was not you, reset your password now and tell your administrator: someone may know it.';

/** Every notice kind and its English wording (the catalogs' `mail.notice.<kind>.*` say the same); `{app}` becomes APP_NAME. */
export const NOTICES = {
  password_changed: {
    subject: 'Your password was changed',
    paragraphs: () => [
      'The password of your {app} account was just changed, and every session signed in with the old one was ended.',
      IF_NOT_YOU,
    ],
  },
  email_change_requested: {
    subject: 'A change of your e-mail address was requested',
    paragraphs: (d) => [
      `Someone signed in to your {app} account asked to change its e-mail address to ${d.newEmail ?? 'another address'}. Nothing changes unless the link sent to that address is used.`,
      IF_NOT_YOU,
    ],
  },
  email_changed: {
    subject: 'Your e-mail address was changed',
    paragraphs: (d) => [
      `The e-mail address of your {app} account was changed to ${d.newEmail ?? 'another address'}. Every session of the account was ended. This address will receive no further mail about the account.`,
      'If this was not you, contact your administrator at once.',
    ],
  },
  email_change_to_taken: {
    subject: 'Someone tried to move an account to your address',
    paragraphs: () => [
      'Someone asked to change the e-mail address of another {app} account to this address, which already belongs to your account. Nothing was changed, and you do not need to do anything.',
    ],
  },
  signup_taken: {
    subject: 'Someone tried to sign up with your address',
    paragraphs: () => [
      'Someone tried to create a new {app} account with this e-mail address, which already has an account. Nothing was changed.',
      'If it was you and you have forgotten your password, you can choose a new one with the link below. Otherwise you can ignore this e-mail.',
    ],
    linkLabel: 'Reset your password',
  },
} as const satisfies Record<string, NoticeSpec>;

export type NoticeKind = keyof typeof NOTICES;

/** A notice's paragraphs in `lang`: `mail.notice.<kind>.p1`, `.p2` (when English has a second). */
function paragraphsIn(lang: MailLanguage, kind: NoticeKind, data: NoticeData, app: string): string[] {
  const values = {
    app,
    new_email: data.newEmail ?? lang.t('mail.notice.another_address'),
  };
  const count = NOTICES[kind].paragraphs(data).length;
  // Keys built from the kind and the paragraph's number (English's count decides which exist), so
  // cast; test/mail/notice-keys.test.ts checks every key a notice builds is in the catalogs.
  return Array.from({ length: count }, (_, i) =>
    lang.t(`mail.notice.${kind}.p${i + 1}` as MessageKey, values),
  );
}

/**
 * Writes a notice of `kind` to `to` into the outbox, in the caller's transaction. Call
 * `outbox.nudge()` after the commit. `language` is the recipient's (mailLanguage: their `locale`,
 * else the causing request's, API §24); absent, the notice is English as written above.
 */
export async function enqueueNotice(
  db: Kysely<DB> | Transaction<DB>,
  mail: { outbox: Outbox; appName: string },
  kind: NoticeKind,
  to: string,
  data: NoticeData = {},
  language?: MailLanguage,
): Promise<void> {
  const spec: NoticeSpec = NOTICES[kind];
  // English keeps its links as they always were; another language's link opens its page in it.
  const linkUrl = (url: string) => (language && language.tag !== 'en' ? withLang(url, language.tag) : url);
  const message = renderAccountMail({
    to,
    appName: mail.appName,
    subject: language ? language.t(`mail.notice.${kind}.subject`) : spec.subject,
    paragraphs: language ? paragraphsIn(language, kind, data, mail.appName) : spec.paragraphs(data),
    ...(data.link && spec.linkLabel
      ? {
          action: {
            label: language ? language.t(`mail.notice.${kind}.label` as MessageKey) : spec.linkLabel,
            url: linkUrl(data.link.url),
            expiresAt: data.link.expiresAt,
          },
        }
      : {}),
    ...(language ? { language } : {}),
  });
  await mail.outbox.enqueue(db, message, `notice.${kind}`);
}
