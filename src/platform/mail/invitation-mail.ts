import type { MailLanguage } from './mail-language.ts';
import { withLang } from './mail-language.ts';
import type { MailMessage } from './mailer.ts';
import {
  checkedMailUrl,
  escapeHtml,
  type InvitationMailInput,
  renderInvitationMail,
  renderInvitationParts,
  singleLine,
} from './templates.ts';

/**
 * The invitation mail in a language of the catalogs (`mail.invitation.*`, docs/languages.md).
 * English keeps renderInvitationMail's wording and layout exactly; both share one layout
 * (renderInvitationParts), as the organization invitation does.
 */
export function renderInvitationMailIn(input: InvitationMailInput, lang: MailLanguage): MailMessage {
  if (lang.tag === 'en') return { ...renderInvitationMail(input), lang: 'en' };
  if (Number.isNaN(input.expiresAt.getTime())) throw new RangeError('expiresAt is not a valid date');
  const app = singleLine(input.productName ?? 'Gatehouse') || 'Gatehouse';
  const inviter = input.inviterName === null ? '' : singleLine(input.inviterName);
  const to = singleLine(input.to, 320);
  const lead = inviter
    ? lang.t('mail.invitation.lead_by', { inviter, app })
    : lang.t('mail.invitation.lead', { app });
  const message = renderInvitationParts({
    to: input.to,
    subject: inviter
      ? lang.t('mail.invitation.subject_by', { inviter, app })
      : lang.t('mail.invitation.subject', { app }),
    lead,
    leadHtml: escapeHtml(lead),
    open: lang.t('mail.invitation.open'),
    label: lang.t('mail.invitation.label'),
    link: withLang(checkedMailUrl(input.inviteUrl), lang.tag),
    expiresAt: input.expiresAt,
    readable: lang.date(input.expiresAt),
    expires: (date, iso) => lang.t('mail.invitation.expires', { date, iso }),
    note: [lang.t('mail.invitation.note', { to })],
    hello: lang.t('mail.hello'),
    lang: lang.tag,
    dir: lang.dir,
  });
  return { ...message, lang: lang.tag };
}
