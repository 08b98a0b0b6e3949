import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../platform/api-error.ts';
import type { DB, LinkPurpose, UserRow } from '../../platform/db/schema.ts';
import { release, reserveOrThrow } from '../budgets/attempt-budget.ts';
import { hashOpaqueToken, newOpaqueToken } from '../tokens/opaque-tokens.ts';
import { linkBudget } from './budgets.ts';
import {
  consumeLinkRow,
  endLinkRow,
  findLinkByTokenHash,
  findLiveLinkOfUser,
  insertLink,
  type LinkRow,
  replaceLiveLinks,
  reserveCodeTryRow,
} from './one-time-links.queries.ts';

/*
 * The one library for mailed one-time links (docs/api.md §11–12, DESIGN.md "Growing the house"):
 * issue (replacing the user's live link of the purpose), peek (opening a link never uses it up, so
 * mail scanners do no harm) and consume (one conditional write: exactly one of concurrent uses wins).
 */

type Db = Kysely<DB> | Transaction<DB>;

export type { LinkPurpose, LinkRow };

// newOpaqueToken: 32 random bytes (256 bits), base64url without padding. Anything else cannot be
// ours and is refused without touching the database.
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** A live link and its user, as `peekLink` finds them. */
export interface LiveLink {
  link: LinkRow;
  user: UserRow;
}

/** The one answer for every dead link: unknown, used, replaced or expired look alike (no oracle). */
export function linkInvalid(): ApiError {
  return new ApiError('link_invalid', {
    detail: 'This link is not valid: it may have expired, been used or been replaced by a newer one',
  });
}

/** Fills `{token}` of a *_URL_TEMPLATE. */
export function linkUrl(template: string, token: string): string {
  return template.replaceAll('{token}', () => token);
}

/**
 * Issues a link of `purpose` for a user, valid `ttlS` seconds, and kills the user's live links of
 * that purpose (`replaced`: how many). Call it in the transaction that enqueues the mail carrying
 * the token.
 */
export async function issueLink(
  db: Db,
  input: {
    userId: string;
    purpose: LinkPurpose;
    email: string;
    ttlS: number;
    now?: number;
    /** A code that travels with the link (§20's pair), already as its keyed hash. */
    codeHash?: string;
  },
): Promise<{ token: string; link: LinkRow; replaced: number }> {
  const now = input.now ?? Date.now();
  const replaced = await replaceLiveLinks(db, input.userId, [input.purpose], now);
  const token = newOpaqueToken();
  const link: LinkRow = {
    id: uuidv7(),
    user_id: input.userId,
    purpose: input.purpose,
    token_hash: hashOpaqueToken(token),
    email: input.email,
    created_at: now,
    expires_at: now + input.ttlS * 1000,
    used_at: null,
    replaced_at: null,
    code_hash: input.codeHash ?? null,
    code_tries: 0,
  };
  await insertLink(db, link);
  return { token, link, replaced };
}

/**
 * The live link of one of `purposes` behind a token, or 410 `link_invalid`. Reads only. A link
 * also dies with its account's usability: the user must be `active`, and a reset or verification
 * link must still name the account's current address (an address changed since makes it stale).
 */
export async function peekLink(
  db: Db,
  token: string,
  purposes: readonly LinkPurpose[],
  now = Date.now(),
): Promise<LiveLink> {
  const found = TOKEN_FORMAT.test(token) ? await findLinkByTokenHash(db, hashOpaqueToken(token)) : undefined;
  if (!found) throw linkInvalid();
  const { link, user } = found;
  const stale = link.purpose !== 'email_change' && link.email !== user.email;
  if (
    !purposes.includes(link.purpose) ||
    link.used_at !== null ||
    link.replaced_at !== null ||
    link.expires_at <= now ||
    user.status !== 'active' ||
    stale
  ) {
    throw linkInvalid();
  }
  return found;
}

/** Uses a peeked link up in the caller's transaction; 410 `link_invalid` when another use won. */
export async function consumeLink(db: Db, link: LinkRow, now = Date.now()): Promise<void> {
  if (!(await useLink(db, link, now))) throw linkInvalid();
}

/**
 * Uses a link up in the caller's transaction if it is still usable at `now`: true when this call
 * won, false when another use won or the link died meanwhile. For a flow with refusals of its own
 * (invitations answer `invitation_used` / `invitation_expired`, not `link_invalid`).
 */
export function useLink(db: Db, link: Pick<LinkRow, 'id'>, now = Date.now()): Promise<boolean> {
  return consumeLinkRow(db, link.id, now);
}

/**
 * `peekLink` behind the client address's link budget (src/identity/links/budgets.ts): the attempt is
 * reserved before the lookup and given back when the link is live, so only dead tokens count.
 */
export async function peekLinkReserved(
  db: Kysely<DB>,
  token: string,
  purposes: readonly LinkPurpose[],
  ip: string | null,
): Promise<LiveLink> {
  const reservation = await reserveOrThrow(db, [linkBudget(ip)], 'Too many link attempts; try again later');
  const live = await peekLink(db, token, purposes);
  await release(db, reservation);
  return live;
}

/**
 * The user's live link of `purpose` that carries a code, or undefined (reads only). Like `peekLink`,
 * a link sent to an address the account no longer has is dead.
 */
export async function liveCodeLinkOfUser(
  db: Db,
  user: UserRow,
  purpose: LinkPurpose,
  now = Date.now(),
): Promise<LinkRow | undefined> {
  const link = await findLiveLinkOfUser(db, user.id, purpose, now);
  if (!link || link.code_hash === null || link.email !== user.email || user.status !== 'active')
    return undefined;
  return link;
}

/**
 * Reserves one try of a link's code before it is compared (docs/api.md §16: every check of a secret
 * reserves its attempt first). The try's number (1-based) when it counts within `maxTries`; null
 * when the link is dead or out of tries.
 */
export function reserveCodeTry(
  db: Db,
  link: LinkRow,
  maxTries: number,
  now = Date.now(),
): Promise<number | null> {
  return reserveCodeTryRow(db, link.id, maxTries, now);
}

/** Ends one link now (its last code try failed, say); harmless when it is already dead. */
export async function endLink(db: Db, link: LinkRow, now = Date.now()): Promise<void> {
  await endLinkRow(db, link.id, now);
}
