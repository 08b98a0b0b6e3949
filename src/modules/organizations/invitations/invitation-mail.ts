import type { MailMessage } from '../../../platform/mail/mailer.ts';
import {
  checkedMailUrl,
  escapeHtml,
  formatReadableUtc,
  htmlButton,
  htmlMail,
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
}

/**
 * The one mail an invitation to an organization sends: who invites, to which organization, the
 * link and its expiry. Names are the organization's and the inviter's own text: one line each,
 * escaped in the HTML part, so neither can forge a header or markup.
 */
export function renderOrganizationInvitationMail(input: OrganizationInvitationMailInput): MailMessage {
  if (Number.isNaN(input.expiresAt.getTime())) throw new RangeError('expiresAt is not a valid date');
  const product = singleLine(input.productName) || 'Gatehouse';
  const organization = singleLine(input.organizationName) || 'an organization';
  const inviter = input.inviterName === null ? '' : singleLine(input.inviterName);
  const to = singleLine(input.to, 320);
  const link = checkedMailUrl(input.joinUrl);
  const expiresIso = input.expiresAt.toISOString();
  const expiresReadable = formatReadableUtc(input.expiresAt);

  const subject = inviter
    ? `${inviter} invited you to ${organization} on ${product}`
    : `You have been invited to ${organization} on ${product}`;
  const lead = inviter
    ? `${inviter} has invited you to join ${organization} on ${product}.`
    : `You have been invited to join ${organization} on ${product}.`;
  const text = [
    'Hello,',
    '',
    lead,
    '',
    'To accept, open this link (sign in, or choose a password if you have no account yet):',
    '',
    link,
    '',
    `The invitation expires on ${expiresReadable} (${expiresIso}).`,
    '',
    `This invitation was sent to ${to}. If you did not expect it, you can ignore this e-mail;`,
    'nothing happens unless the link is used. Do not forward it: the link works for whoever opens it.',
    '',
  ].join('\n');

  const h = escapeHtml;
  const leadHtml = inviter
    ? `<strong>${h(inviter)}</strong> has invited you to join <strong>${h(organization)}</strong> on ${h(product)}.`
    : `You have been invited to join <strong>${h(organization)}</strong> on ${h(product)}.`;
  const html = htmlMail(
    subject,
    `<p>${leadHtml}</p>
<p>To accept, open this link (sign in, or choose a password if you have no account yet):</p>
${htmlButton('Accept the invitation', link)}
<p>The invitation expires on <time datetime="${h(expiresIso)}">${h(expiresReadable)}</time> (${h(expiresIso)}).</p>
<p style="font-size: 13px; color: #59636e;">This invitation was sent to ${h(to)}. If you did not expect it, you can ignore this e-mail; nothing happens unless the link is used. Do not forward it: the link works for whoever opens it.</p>`,
  );
  return { to: input.to, subject, text, html };
}
