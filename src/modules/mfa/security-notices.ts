import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../kernel/context.types.ts';
import type { DB } from '../../platform/db/schema.ts';
import { escapeHtml, formatReadableUtc, singleLine } from '../../platform/mail/templates.ts';

/**
 * The security notices of docs/api.md §13 that second factors send. Kept in this one file so they can
 * move into the shared notices module as one piece. A notice says what happened and when, never a
 * secret or a code.
 */
export type SecurityNoticeKind =
  | 'totp_enabled'
  | 'totp_disabled'
  | 'recovery_codes_regenerated'
  | 'passkey_added'
  | 'passkey_removed'
  | 'mfa_reset';

const WHAT: Record<SecurityNoticeKind, { subject: string; line: string }> = {
  totp_enabled: {
    subject: 'Authenticator app sign-in was turned on',
    line: 'An authenticator app (TOTP) was added as a second factor to your account.',
  },
  totp_disabled: {
    subject: 'Authenticator app sign-in was turned off',
    line: 'The authenticator app (TOTP) was removed from your account.',
  },
  recovery_codes_regenerated: {
    subject: 'New recovery codes were created',
    line: 'A new set of recovery codes was created for your account; the previous codes no longer work.',
  },
  passkey_added: { subject: 'A passkey was added', line: 'A passkey was added to your account.' },
  passkey_removed: { subject: 'A passkey was removed', line: 'A passkey was removed from your account.' },
  mfa_reset: {
    subject: 'Your second factors were reset',
    line: 'An administrator removed every second factor (authenticator app, passkeys, recovery codes) from your account and signed out its sessions.',
  },
};

/** Queues a notice in the caller's transaction (it is sent only if the change commits); nudge after commit. */
export async function queueSecurityNotice(
  ctx: AppContext,
  db: Kysely<DB> | Transaction<DB>,
  to: string,
  kind: SecurityNoticeKind,
  detail?: string,
): Promise<void> {
  const app = ctx.config.appName;
  const { subject, line } = WHAT[kind];
  const when = formatReadableUtc(new Date());
  const extra = detail ? singleLine(detail) : null;
  const text = [
    'Hello,',
    '',
    line,
    ...(extra ? [extra] : []),
    `When: ${when}`,
    '',
    `If this was you, there is nothing to do. If not, sign in to ${app} and secure your account (change your password, review your sessions) or contact your administrator.`,
    '',
  ].join('\n');
  const h = escapeHtml;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${h(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5;">
<p>Hello,</p>
<p>${h(line)}</p>${extra ? `\n<p>${h(extra)}</p>` : ''}
<p>When: ${h(when)}</p>
<p>If this was you, there is nothing to do. If not, sign in to ${h(app)} and secure your account (change your password, review your sessions) or contact your administrator.</p>
</body></html>
`;
  await ctx.mail.outbox.enqueue(db, { to, subject: `${app}: ${subject}`, text, html }, `notice.${kind}`);
}
