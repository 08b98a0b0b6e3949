import type { Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';
import { endMfaTokensOfUser } from '../factors/mfa-tokens.queries.ts';
import { endLiveLinksOfUser } from './credential-events.queries.ts';

/** How many of each one credential event ended. */
export interface EndedLinks {
  links: number;
  mfa_tokens: number;
}

/**
 * Ends, in the caller's transaction, everything mailed or handed out earlier that could still act
 * for the user after a credential event (docs/api.md §16): every live one-time link of every
 * purpose (`password_reset`, `email_verify`, `email_change`, `email_signin`; `invitation` links
 * stay, see endLiveLinksOfUser) and every outstanding `mfa_token`. §20's sign-in pair is one link row carrying
 * both the link's token hash and the code's HMAC, so ending the row ends the link and the code
 * together. A link ended here answers 410 `link_invalid` (a sign-in pair: 401 `invalid_credentials`),
 * an `mfa_token` 401 `mfa_token_invalid`. A new kind of outstanding credential kept in its own table
 * is ended here too: this is the one place.
 *
 * The events (each path calls this inside the transaction that makes the change — hence a
 * `Transaction`, never the pool — so the links die with it or not at all): a password reset, a
 * password change, a global logout, a password set by an admin or by the operator (`create-admin`
 * on an existing account), a disable, an admin's second-factor reset and a completed e-mail change.
 * A new path that makes one of these events calls it too.
 */
export async function endOutstandingLinks(
  trx: Transaction<DB>,
  userId: string,
  now = Date.now(),
): Promise<EndedLinks> {
  const links = await endLiveLinksOfUser(trx, userId, now);
  const mfaTokens = await endMfaTokensOfUser(trx, userId, now);
  return { links, mfa_tokens: mfaTokens };
}
