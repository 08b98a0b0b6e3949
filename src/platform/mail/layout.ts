import type { MailLanguage } from './mail-language.ts';
import type { MailMessage } from './mailer.ts';
import {
  checkedMailUrl,
  escapeHtml,
  formatReadableUtc,
  htmlButton,
  htmlMail,
  singleLine,
} from './templates.ts';

/**
 * One account mail: a subject that says what happened, a few paragraphs, at most one link (the
 * only secret a mail may carry), and a footer line. Rendered as text and HTML with the product name.
 */
export interface AccountMail {
  to: string;
  appName: string;
  subject: string;
  paragraphs: readonly string[];
  action?: { label: string; url: string; expiresAt?: Date };
  footer?: string;
  /** The mail's language (mailLanguage); absent: English as written here. */
  language?: MailLanguage;
}

const DATE_MARK = '\u0000date\u0000';

/** Renders an AccountMail into the outbox's message (text and HTML bodies). */
export function renderAccountMail(mail: AccountMail): MailMessage {
  const product = singleLine(mail.appName) || 'Gatehouse';
  const subject = singleLine(`${mail.subject} (${product})`, 200);
  const paragraphs = mail.paragraphs.map((p) => p.replaceAll('{app}', product));
  const link = mail.action ? checkedMailUrl(mail.action.url) : null;
  const expires = mail.action?.expiresAt;
  const lang = mail.language;
  const readable = (date: Date) => (lang ? lang.date(date) : formatReadableUtc(date));
  const expiry = expires
    ? lang
      ? lang.t('mail.link_expiry_text', { date: readable(expires), iso: expires.toISOString() })
      : `The link works once and expires on ${formatReadableUtc(expires)} (${expires.toISOString()}).`
    : null;
  const footer = (
    mail.footer ??
    (lang
      ? lang.t('mail.footer', { app: product, to: mail.to })
      : `This message was sent by ${product} to ${mail.to}.`)
  ).replaceAll('{app}', product);
  const hello = lang ? lang.t('mail.hello') : 'Hello,';
  const expiryHtml = (date: Date) => {
    const sentence = lang
      ? lang.t('mail.link_expiry', { date: DATE_MARK })
      : `The link works once and expires on ${DATE_MARK}.`;
    const time = `<time datetime="${escapeHtml(date.toISOString())}">${escapeHtml(readable(date))}</time>`;
    return `<p>${escapeHtml(sentence).replace(DATE_MARK, time)}</p>`;
  };

  const text = [
    hello,
    '',
    ...paragraphs.flatMap((p) => [p, '']),
    ...(link ? [`${mail.action?.label}:`, '', link, ''] : []),
    ...(expiry ? [expiry, ''] : []),
    footer,
    '',
  ].join('\n');

  const h = escapeHtml;
  const html = htmlMail(
    subject,
    `${paragraphs.map((p) => `<p>${h(p)}</p>`).join('\n')}
${link ? htmlButton(mail.action?.label ?? '', link) : ''}
${expiry && expires ? expiryHtml(expires) : ''}
<p style="font-size: 13px; color: #59636e;">${h(footer)}</p>`,
    lang?.tag,
    lang?.dir,
    hello,
  );
  return { to: mail.to, subject, text, html, ...(lang ? { lang: lang.tag } : {}) };
}
