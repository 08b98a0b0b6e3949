import type { MailMessage } from './mailer.ts';

export interface InvitationMailInput {
  to: string;
  /** Display name of the inviting user; null when unknown (e.g. a CLI invitation). */
  inviterName: string | null;
  /** Absolute http(s) link carrying the invitation token. */
  inviteUrl: string;
  expiresAt: Date;
  productName?: string;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

// Names are user-supplied: no control characters (CR/LF would split a header or forge lines in
// the text body), no bidi overrides that could disguise the sender, single-spaced and bounded.
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
const MAX_NAME_LENGTH = 80;

/** Makes user text safe for a single header or text line: no control chars, collapsed spaces, bounded. */
export function singleLine(text: string, maxLength = MAX_NAME_LENGTH): string {
  const flat = text.replace(UNSAFE_CHARS, ' ').replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length > maxLength ? `${chars.slice(0, maxLength - 1).join('')}…` : flat;
}

// Spelled out by hand rather than with Intl: ICU versions differ in punctuation ("at", commas),
// and a mail template should not change with the Node.js build.
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Readable UTC date, e.g. "Friday, 28 November 2025, 14:30 UTC". */
export function formatReadableUtc(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const weekday = WEEKDAYS[date.getUTCDay()];
  const month = MONTHS[date.getUTCMonth()];
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
  return `${weekday}, ${date.getUTCDate()} ${month} ${date.getUTCFullYear()}, ${time} UTC`;
}

/** The HTML document of every mail: the subject as its title, one plain style, "Hello," first. */
export function htmlMail(subject: string, body: string, lang = 'en', dir = 'ltr', hello = 'Hello,'): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(subject)}</title>
</head>
<body style="font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; line-height: 1.5; color: #1f2328;">
<p>${escapeHtml(hello)}</p>
${body}
</body>
</html>
`;
}

/** A mail's link as a button, with the URL written out beneath it for clients that hide buttons. */
export function htmlButton(label: string, link: string): string {
  return `<p><a href="${escapeHtml(link)}" style="display: inline-block; padding: 8px 16px; background: #1f6feb; color: #ffffff; text-decoration: none; border-radius: 6px;">${escapeHtml(label)}</a></p>
<p style="font-size: 13px; word-break: break-all;">${escapeHtml(link)}</p>`;
}

/** Only our own server builds links; anything but absolute http(s) (javascript:, data:) is a bug. */
export function checkedMailUrl(raw: string): string {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError('a mail link must be an absolute http(s) URL');
  }
  return url.href;
}

/**
 * The parts of an invitation mail (to the service, or to an organization), already in the mail's
 * language: one layout for both, so they read alike and change together.
 */
export interface InvitationParts {
  to: string;
  subject: string;
  lead: string;
  /** The lead as HTML (escaped by the caller; it may mark names up). */
  leadHtml: string;
  open: string;
  label: string;
  /** The checked link (checkedMailUrl). */
  link: string;
  expiresAt: Date;
  /** The expiry as the reader reads it (formatReadableUtc, or Intl in the mail's language). */
  readable: string;
  /** The expiry sentence around a date and its ISO instant. */
  expires: (date: string, iso: string) => string;
  /** The closing note as the text body's lines (the HTML part joins them with a space). */
  note: readonly string[];
  hello?: string;
  lang?: string;
  dir?: 'ltr' | 'rtl';
}

const DATE_MARK = '\u0000date\u0000';

/** Lays out an invitation mail: greeting, lead, the link as text and button, expiry, note. */
export function renderInvitationParts(p: InvitationParts): MailMessage {
  const hello = p.hello ?? 'Hello,';
  const iso = p.expiresAt.toISOString();
  const text = [
    hello,
    '',
    p.lead,
    '',
    p.open,
    '',
    p.link,
    '',
    p.expires(p.readable, iso),
    '',
    ...p.note,
    '',
  ].join('\n');
  const h = escapeHtml;
  const expires = h(p.expires(DATE_MARK, iso)).replace(
    DATE_MARK,
    `<time datetime="${h(iso)}">${h(p.readable)}</time>`,
  );
  const html = htmlMail(
    p.subject,
    `<p>${p.leadHtml}</p>
<p>${h(p.open)}</p>
${htmlButton(p.label, p.link)}
<p>${expires}</p>
<p style="font-size: 13px; color: #59636e;">${h(p.note.join(' '))}</p>`,
    p.lang,
    p.dir,
    hello,
  );
  return { to: p.to, subject: p.subject, text, html };
}

/** English's closing note of an invitation, as two text lines. */
export function englishInvitationNote(to: string): string[] {
  return [
    `This invitation was sent to ${to}. If you did not expect it, you can ignore this e-mail;`,
    'nothing happens unless the link is used. Do not forward it: the link works for whoever opens it.',
  ];
}

/** Renders the invitation e-mail: subject, plain-text and HTML bodies with link, inviter and expiry. */
export function renderInvitationMail(input: InvitationMailInput): MailMessage {
  if (Number.isNaN(input.expiresAt.getTime())) throw new RangeError('expiresAt is not a valid date');
  const product = singleLine(input.productName ?? 'Gatehouse') || 'Gatehouse';
  const inviter = input.inviterName === null ? '' : singleLine(input.inviterName);
  const to = singleLine(input.to, 320);
  const h = escapeHtml;
  return renderInvitationParts({
    to: input.to,
    subject: inviter ? `${inviter} invited you to ${product}` : `You have been invited to ${product}`,
    lead: inviter
      ? `${inviter} has invited you to join ${product}.`
      : `You have been invited to join ${product}.`,
    leadHtml: inviter
      ? `<strong>${h(inviter)}</strong> has invited you to join <strong>${h(product)}</strong>.`
      : `You have been invited to join <strong>${h(product)}</strong>.`,
    open: 'To accept, open this link and choose a password:',
    label: 'Accept the invitation',
    link: checkedMailUrl(input.inviteUrl),
    expiresAt: input.expiresAt,
    readable: formatReadableUtc(input.expiresAt),
    expires: (date, iso) => `The invitation expires on ${date} (${iso}).`,
    note: englishInvitationNote(to),
  });
}
