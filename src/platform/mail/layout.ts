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
}

/** Renders an AccountMail into the outbox's message (text and HTML bodies). */
export function renderAccountMail(mail: AccountMail): MailMessage {
  const product = singleLine(mail.appName) || 'Gatehouse';
  const subject = singleLine(`${mail.subject} (${product})`, 200);
  const paragraphs = mail.paragraphs.map((p) => p.replaceAll('{app}', product));
  const link = mail.action ? checkedMailUrl(mail.action.url) : null;
  const expires = mail.action?.expiresAt;
  const expiry = expires
    ? `The link works once and expires on ${formatReadableUtc(expires)} (${expires.toISOString()}).`
    : null;
  const footer = (mail.footer ?? `This message was sent by ${product} to ${mail.to}.`).replaceAll(
    '{app}',
    product,
  );

  const text = [
    'Hello,',
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
${expiry && expires ? `<p>The link works once and expires on <time datetime="${h(expires.toISOString())}">${h(formatReadableUtc(expires))}</time>.</p>` : ''}
<p style="font-size: 13px; color: #59636e;">${h(footer)}</p>`,
  );
  return { to: mail.to, subject, text, html };
}
