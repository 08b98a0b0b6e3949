import type { MailLanguage } from './mail-language.ts';
import { withLang } from './mail-language.ts';
import type { MailMessage } from './mailer.ts';
import {
  checkedMailUrl,
  escapeHtml,
  htmlButton,
  htmlMail,
  type InvitationMailInput,
  renderInvitationMail,
  singleLine,
} from './templates.ts';

const DATE_MARK = '\u0000date\u0000';

/**
 * The invitation mail in a language of the catalogs (`mail.invitation.*`, docs/languages.md).
 * English keeps renderInvitationMail's wording and layout exactly.
 */
export function renderInvitationMailIn(input: InvitationMailInput, lang: MailLanguage): MailMessage {
  if (lang.tag === 'en') return { ...renderInvitationMail(input), lang: 'en' };
  if (Number.isNaN(input.expiresAt.getTime())) throw new RangeError('expiresAt is not a valid date');
  const app = singleLine(input.productName ?? 'Gatehouse') || 'Gatehouse';
  const inviter = input.inviterName === null ? '' : singleLine(input.inviterName);
  const to = singleLine(input.to, 320);
  const link = withLang(checkedMailUrl(input.inviteUrl), lang.tag);
  const iso = input.expiresAt.toISOString();
  const readable = lang.date(input.expiresAt);
  const subject = inviter
    ? lang.t('mail.invitation.subject_by', { inviter, app })
    : lang.t('mail.invitation.subject', { app });
  const lead = inviter
    ? lang.t('mail.invitation.lead_by', { inviter, app })
    : lang.t('mail.invitation.lead', { app });
  const open = lang.t('mail.invitation.open');
  const note = lang.t('mail.invitation.note', { to });
  const hello = lang.t('mail.hello');
  const text = [
    hello,
    '',
    lead,
    '',
    open,
    '',
    link,
    '',
    lang.t('mail.invitation.expires', { date: readable, iso }),
    '',
    note,
    '',
  ].join('\n');
  const h = escapeHtml;
  const expires = h(lang.t('mail.invitation.expires', { date: DATE_MARK, iso })).replace(
    DATE_MARK,
    `<time datetime="${h(iso)}">${h(readable)}</time>`,
  );
  const html = htmlMail(
    subject,
    `<p>${h(lead)}</p>
<p>${h(open)}</p>
${htmlButton(lang.t('mail.invitation.label'), link)}
<p>${expires}</p>
<p style="font-size: 13px; color: #59636e;">${h(note)}</p>`,
    lang.tag,
    lang.dir,
    hello,
  );
  return { to: input.to, subject, text, html, lang: lang.tag };
}
