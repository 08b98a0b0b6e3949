import { type MailLanguage, withLang } from '../../../platform/mail/mail-language.ts';
import type { MailMessage } from '../../../platform/mail/mailer.ts';
import {
  checkedMailUrl,
  englishInvitationNote,
  escapeHtml,
  formatReadableUtc,
  renderInvitationParts,
  singleLine,
} from '../../../platform/mail/templates.ts';

/** What the mail of an invitation to an organization says (docs/organizations.md). */
export interface OrganizationInvitationMailInput {
  to: string;
  organizationName: string;
  /** The inviting person's name; null when it is empty. */
  inviterName: string | null;
  /** The hosted join page (or ORG_INVITE_URL_TEMPLATE's), carrying the token. */
  joinUrl: string;
  expiresAt: Date;
  productName: string;
  /** The mail's language (mailLanguage); absent or English: the English wording below. */
  language?: MailLanguage;
}

/**
 * The one mail an invitation to an organization sends: who invites, to which organization, the
 * link and its expiry, in the layout of the account invitation (renderInvitationParts). Names are
 * the organization's and the inviter's own text: one line each, escaped in the HTML part, so neither
 * can forge a header or markup. Another language than English: `mail.org_invitation.*`, the link
 * with `?lang=` (API §24).
 */
export function renderOrganizationInvitationMail(input: OrganizationInvitationMailInput): MailMessage {
  if (Number.isNaN(input.expiresAt.getTime())) throw new RangeError('expiresAt is not a valid date');
  const product = singleLine(input.productName) || 'Gatehouse';
  const inviter = input.inviterName === null ? '' : singleLine(input.inviterName);
  const to = singleLine(input.to, 320);
  const link = checkedMailUrl(input.joinUrl);
  const lang = input.language;
  const h = escapeHtml;
  if (lang && lang.tag !== 'en') {
    const organization = singleLine(input.organizationName) || lang.t('mail.org_invitation.an_organization');
    const values = { inviter, organization, app: product };
    const lead = inviter
      ? lang.t('mail.org_invitation.lead_by', values)
      : lang.t('mail.org_invitation.lead', values);
    const message = renderInvitationParts({
      to: input.to,
      subject: inviter
        ? lang.t('mail.org_invitation.subject_by', values)
        : lang.t('mail.org_invitation.subject', values),
      lead,
      leadHtml: h(lead),
      open: lang.t('mail.org_invitation.open'),
      label: lang.t('mail.invitation.label'),
      link: withLang(link, lang.tag),
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
  const organization = singleLine(input.organizationName) || 'an organization';
  const message = renderInvitationParts({
    to: input.to,
    subject: inviter
      ? `${inviter} invited you to ${organization} on ${product}`
      : `You have been invited to ${organization} on ${product}`,
    lead: inviter
      ? `${inviter} has invited you to join ${organization} on ${product}.`
      : `You have been invited to join ${organization} on ${product}.`,
    leadHtml: inviter
      ? `<strong>${h(inviter)}</strong> has invited you to join <strong>${h(organization)}</strong> on ${h(product)}.`
      : `You have been invited to join <strong>${h(organization)}</strong> on ${h(product)}.`,
    open: 'To accept, open this link (sign in, or choose a password if you have no account yet):',
    label: 'Accept the invitation',
    link,
    expiresAt: input.expiresAt,
    readable: formatReadableUtc(input.expiresAt),
    expires: (date, iso) => `The invitation expires on ${date} (${iso}).`,
    note: englishInvitationNote(to),
  });
  return lang ? { ...message, lang: 'en' } : message;
}
