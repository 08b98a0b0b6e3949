import { renderAccountMail } from './layout.ts';
import { type MailLanguage, withLang } from './mail-language.ts';
import type { MailMessage } from './mailer.ts';

/** What a mailed link is for, as its mail says it. */
export type LinkMailKind = 'password_reset' | 'email_verify' | 'email_change' | 'signup';

interface LinkMailInput {
  to: string;
  appName: string;
  url: string;
  expiresAt: Date;
  /** The mail's language (mailLanguage); absent: English as written here. */
  language?: MailLanguage;
}

const WORDING: Record<LinkMailKind, { subject: string; paragraphs: string[]; label: string }> = {
  password_reset: {
    subject: 'Reset your password',
    paragraphs: [
      'Someone (hopefully you) asked to reset the password of your {app} account. To choose a new password, open the link below.',
      'If you did not ask for this, ignore this e-mail: your password stays as it is. Do not forward it: the link works for whoever opens it.',
    ],
    label: 'Choose a new password',
  },
  email_verify: {
    subject: 'Confirm your e-mail address',
    paragraphs: [
      'Please confirm that this address belongs to your {app} account by opening the link below.',
      'If you did not ask for this, you can ignore this e-mail.',
    ],
    label: 'Confirm this address',
  },
  email_change: {
    subject: 'Confirm your new e-mail address',
    paragraphs: [
      'Someone signed in to a {app} account asked to use this address for it. Open the link below to confirm; the account uses its old address until then.',
      'If you did not ask for this, ignore this e-mail: nothing changes.',
    ],
    label: 'Confirm the new address',
  },
  signup: {
    subject: 'Confirm your address to finish signing up',
    paragraphs: [
      'Welcome to {app}. Please confirm that this address is yours by opening the link below.',
      'If you did not sign up, you can ignore this e-mail.',
    ],
    label: 'Confirm this address',
  },
};

/** The mail that carries a one-time link (reset, verification, change, sign-up confirmation). */
export function renderLinkMail(kind: LinkMailKind, input: LinkMailInput): MailMessage {
  const lang = input.language;
  if (lang === undefined) {
    const w = WORDING[kind];
    return renderAccountMail({
      to: input.to,
      appName: input.appName,
      subject: w.subject,
      paragraphs: w.paragraphs,
      action: { label: w.label, url: input.url, expiresAt: input.expiresAt },
    });
  }
  // The catalogs' wording (locales/<tag>.json, `mail.<kind>.*`), English's the same as WORDING's.
  const app = { app: input.appName };
  return renderAccountMail({
    to: input.to,
    appName: input.appName,
    subject: lang.t(`mail.${kind}.subject`),
    paragraphs: [lang.t(`mail.${kind}.p1`, app), lang.t(`mail.${kind}.p2`, app)],
    action: {
      label: lang.t(`mail.${kind}.label`),
      url: withLang(input.url, lang.tag),
      expiresAt: input.expiresAt,
    },
    language: lang,
  });
}
