import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Kysely, Transaction } from 'kysely';
import { ApiError } from '../../platform/api-error.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import type { DB } from '../../platform/db/schema.ts';
import { type Budget, type Reservation, release, reserveAttempt } from './attempt-budget.ts';
import { deleteCounter, deleteCountersBefore, deleteCountersByPrefix } from './throttle.queries.ts';

/** docs/api.md §5: five failures for one account from one address within 15 minutes. */
export const ACCOUNT_FAILURE_LIMIT = 5;
export const ACCOUNT_WINDOW_MS = 15 * 60_000;
/** The per-address budget (`LOGIN_FAILURES_PER_ADDRESS_PER_MIN`) counts over one minute. */
export const ADDRESS_WINDOW_MS = 60_000;

/** One reserved password check: the counters it holds, to be settled by `succeed` or `release`. */
export interface ThrottleTicket {
  accountKey: string;
  addressKey: string;
  reservation: Reservation;
}

/**
 * Failed-password throttling over `throttle_counters` (shared by every instance on the database),
 * built on the attempt-budget primitive: every password check first **reserves** its attempt
 * against the account-and-address and the address budgets, in one conditional write per budget,
 * before any hashing. A wrong password simply keeps its reservation (that is the counted failure);
 * a right one resets the account's count and gives the address's attempt back. So N parallel
 * guesses can never get more than the budget evaluated (every check of a secret reserves its attempt
 * atomically before the expensive work). Windows are fixed: they start
 * at the first counted attempt and end `windowMs` later.
 */
export interface LoginThrottle {
  /** Reserves one attempt; throws 429 `rate_limited` with Retry-After when a budget is spent. */
  reserve(email: string, ip: string | null): Promise<ThrottleTicket>;
  /** A right password: deletes the account's counter for that address and releases the address attempt. */
  succeed(ticket: ThrottleTicket, db?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** The attempt must not count (right password on a disabled account, hashing at capacity). */
  release(ticket: ThrottleTicket, db?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** Deletes counters whose windows are over; returns how many. */
  prune(now?: number): Promise<number>;
}

export interface ThrottleLimits {
  failuresPerAddressPerMin: number;
}

/** Creates the throttle over a database. */
export function createLoginThrottle(db: Kysely<DB>, limits: ThrottleLimits): LoginThrottle {
  return {
    async reserve(email, ip) {
      const bucket = addressBucket(ip);
      const accountKey = accountCounterKey(email, bucket);
      const addressKey = `login:addr:${bucket}`;
      const budgets: Budget[] = [
        { key: accountKey, limit: ACCOUNT_FAILURE_LIMIT, windowMs: ACCOUNT_WINDOW_MS },
        { key: addressKey, limit: limits.failuresPerAddressPerMin, windowMs: ADDRESS_WINDOW_MS },
      ];
      // Concurrent sign-ins' reservations share a commit on SQLite (group-commit.ts); each is
      // still counted, and on disk, before its password is hashed.
      const result = await groupCommit(db)((db) => reserveAttempt(db, budgets));
      if (!result.ok) {
        throw new ApiError('rate_limited', {
          detail: 'Too many sign-in attempts; try again later',
          retryAfterS: result.retryAfterMs / 1000,
        });
      }
      return { accountKey, addressKey, reservation: result.reservation };
    },

    async succeed(ticket, trx = db) {
      await deleteCounter(trx, ticket.accountKey);
      const address = ticket.reservation.held.filter((h) => h.key === ticket.addressKey);
      await release(trx, { held: address });
    },

    release(ticket, trx = db) {
      return release(trx, ticket.reservation);
    },

    prune(now = Date.now()) {
      // Only login's own counters: other budgets (hourly mail budgets…) have longer windows.
      return deleteCountersBefore(db, now - Math.max(ACCOUNT_WINDOW_MS, ADDRESS_WINDOW_MS), 'login:');
    },
  };
}

/**
 * `login:acct:<sha256(email)>:<sha256(address bucket)>`. Digests keep addresses out of the counter
 * table (it would otherwise list every address anyone tried) and bound the key length; the e-mail
 * part first makes every counter of one account findable by prefix, so an admin can unlock it.
 */
export function accountCounterKey(email: string, bucket: string): string {
  return `${accountCounterPrefix(email)}${digest(bucket)}`;
}

/** The prefix every counter of one account (over all client addresses) starts with. */
export function accountCounterPrefix(email: string): string {
  return `login:acct:${digest(email)}:`;
}

/** Clears an account's failed-login counts from every address (admin unlock); returns how many. */
export function clearAccountCounters(db: Kysely<DB> | Transaction<DB>, email: string): Promise<number> {
  return deleteCountersByPrefix(db, accountCounterPrefix(email));
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * The address a budget is kept for. IPv4-mapped IPv6 counts as its IPv4 address; other IPv6
 * addresses count per /64, since one client usually holds a whole /64 and could otherwise rotate
 * through 2^64 addresses, each with a fresh budget.
 */
export function addressBucket(ip: string | null): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip.slice(0, 64);
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(ip: string): string[] {
  const withoutZone = ip.split('%')[0] ?? ip;
  const [head = '', tail] = withoutZone.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (::1.2.3.4) takes two groups; only the first four groups matter here.
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => (g.includes('.') ? g : (Number.parseInt(g, 16) || 0).toString(16)));
}
