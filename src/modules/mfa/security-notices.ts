import type { Kysely, Transaction } from 'kysely';
import type { ClientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { DB } from '../../platform/db/schema.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';
import { escapeHtml, singleLine } from '../../platform/mail/templates.ts';

/**
 * The security notices of docs/api.md §13 that second factors send. Kept in this one file so they can
 * move into the shared notices module as one piece. A notice says what happened and when, never a
 * secret or a code. Its words are the catalogs' `mail.security.*` (locales/<tag>.json).
 */
export type SecurityNoticeKind =
  | 'totp_enabled'
  | 'totp_disabled'
  | 'recovery_codes_regenerated'
  | 'passkey_added'
  | 'passkey_removed'
  | 'mfa_reset';

/** Whom a notice goes to: their address, and their `locale` for its language. */
interface Recipient {
  email: string;
  locale: string | null;
}

/**
 * Queues a notice in the caller's transaction (it is sent only if the change commits); nudge after
 * commit. In the recipient's `locale`, else the language of the request that caused it (API §24).
 */
export async function queueSecurityNotice(
  ctx: AppContext,
  db: Kysely<DB> | Transaction<DB>,
  to: Recipient,
  kind: SecurityNoticeKind,
  options: { request?: ClientInfo['language'] | undefined; passkey?: string } = {},
): Promise<void> {
  const app = ctx.config.appName;
  const lang = mailLanguage(ctx.languages, to.locale, options.request);
  const subject = lang.t(`mail.security.${kind}.subject`);
  const line = lang.t(`mail.security.${kind}.line`);
  const when = lang.t('mail.security.when', { date: lang.date(new Date()) });
  const advice = lang.t('mail.security.advice', { app });
  const hello = lang.t('mail.hello');
  const extra =
    options.passkey === undefined
      ? null
      : lang.t('mail.security.passkey', { name: singleLine(options.passkey) });
  const text = [hello, '', line, ...(extra ? [extra] : []), when, '', advice, ''].join('\n');
  const h = escapeHtml;
  const html = `<!doctype html>
<html lang="${h(lang.tag)}" dir="${lang.dir}"><head><meta charset="utf-8"><title>${h(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5;">
<p>${h(hello)}</p>
<p>${h(line)}</p>${extra ? `\n<p>${h(extra)}</p>` : ''}
<p>${h(when)}</p>
<p>${h(advice)}</p>
</body></html>
`;
  await ctx.mail.outbox.enqueue(
    db,
    { to: to.email, subject: `${app}: ${subject}`, text, html, lang: lang.tag },
    `notice.${kind}`,
  );
}
