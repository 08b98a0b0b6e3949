import type { Kysely, Transaction } from 'kysely';
import type { ClientInfo } from '../../identity/index.ts';
import { issueLink, linkUrl } from '../../identity/links/one-time-links.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';
import { renderLinkMail } from '../../platform/mail/link-mails.ts';
import { mailLanguage } from '../../platform/mail/mail-language.ts';

/** A recovery link just issued: where it points and until when it works. */
export interface IssuedResetLink {
  url: string;
  expiresAt: number;
}

/** Issues a recovery link for a user (replacing the live one), in the caller's transaction. */
export async function issueResetLink(
  ctx: AppContext,
  db: Kysely<DB> | Transaction<DB>,
  user: UserRow,
): Promise<IssuedResetLink> {
  const { token, link } = await issueLink(db, {
    userId: user.id,
    purpose: 'password_reset',
    email: user.email,
    ttlS: ctx.config.passwordResetTtlS,
  });
  return { url: linkUrl(ctx.config.resetUrlTemplate, token), expiresAt: link.expires_at };
}

/** Issues a recovery link and writes its mail to the outbox, in the caller's transaction. */
export async function mailResetLink(
  ctx: AppContext,
  db: Kysely<DB> | Transaction<DB>,
  user: UserRow,
  request?: ClientInfo['language'],
): Promise<IssuedResetLink> {
  const issued = await issueResetLink(ctx, db, user);
  const mail = renderLinkMail('password_reset', {
    to: user.email,
    appName: ctx.config.appName,
    url: issued.url,
    expiresAt: new Date(issued.expiresAt),
    // The recipient's locale, else the asking request's language (API §24).
    language: mailLanguage(ctx.languages, user.locale, request),
  });
  await ctx.mail.outbox.enqueue(db, mail, 'password_reset');
  return issued;
}
