import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { deleteCounter, deleteCountersBefore, incrementCounters, readCounters } from './throttle.queries.ts';

/** API.md §5: five failures for one account from one address within 15 minutes. */
export const ACCOUNT_FAILURE_LIMIT = 5;
export const ACCOUNT_WINDOW_MS = 15 * 60_000;
/** The per-address budget (`LOGIN_FAILURES_PER_ADDRESS_PER_MIN`) counts over one minute. */
export const ADDRESS_WINDOW_MS = 60_000;

/** The counters one attempt touches, and whether its account counter exists (so success can skip a delete). */
export interface ThrottleTicket {
  accountKey: string;
  addressKey: string;
  accountCounted: boolean;
}

/**
 * Failed-password throttling, its state in `throttle_counters` so every instance sharing the
 * database sees the same counts. Windows are fixed: they start at the first failure and end
 * `windowMs` later, when the next failure starts a new one.
 */
export interface LoginThrottle {
  /** Reads both counters (one query) and throws 429 `rate_limited` with Retry-After when a budget is spent. */
  check(email: string, ip: string | null): Promise<ThrottleTicket>;
  /**
   * Counts a failed attempt against the account-and-address and the address budgets (one
   * statement). Pass a transaction to count it together with the attempt's audit entry.
   */
  fail(ticket: ThrottleTicket, db?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** Clears the account's count for that address after a success; no query when there was none. */
  succeed(ticket: ThrottleTicket, db?: Kysely<DB> | Transaction<DB>): Promise<void>;
  /** Deletes counters whose windows are over; returns how many. */
  prune(now?: number): Promise<number>;
}

export interface ThrottleLimits {
  failuresPerAddressPerMin: number;
}

/** Creates the throttle over a database. */
export function createLoginThrottle(db: Kysely<DB>, limits: ThrottleLimits): LoginThrottle {
  return {
    async check(email, ip) {
      const { accountKey, addressKey } = loginThrottleKeys(email, ip);
      const now = Date.now();
      const rows = await readCounters(db, [accountKey, addressKey]);
      let retryAfterMs = 0;
      let accountCounted = false;
      for (const row of rows) {
        const isAccount = row.key === accountKey;
        const windowMs = isAccount ? ACCOUNT_WINDOW_MS : ADDRESS_WINDOW_MS;
        const limit = isAccount ? ACCOUNT_FAILURE_LIMIT : limits.failuresPerAddressPerMin;
        const endsAt = row.window_started_at + windowMs;
        if (isAccount) accountCounted = true;
        if (endsAt > now && row.count >= limit) retryAfterMs = Math.max(retryAfterMs, endsAt - now);
      }
      if (retryAfterMs > 0) {
        throw new ApiError('rate_limited', {
          detail: 'Too many failed sign-in attempts; try again later',
          retryAfterS: retryAfterMs / 1000,
        });
      }
      return { accountKey, addressKey, accountCounted };
    },

    fail(ticket, trx = db) {
      return incrementCounters(
        trx,
        [
          { key: ticket.accountKey, windowMs: ACCOUNT_WINDOW_MS },
          { key: ticket.addressKey, windowMs: ADDRESS_WINDOW_MS },
        ],
        Date.now(),
      );
    },

    async succeed(ticket, trx = db) {
      if (ticket.accountCounted) await deleteCounter(trx, ticket.accountKey);
    },

    prune(now = Date.now()) {
      return deleteCountersBefore(db, now - Math.max(ACCOUNT_WINDOW_MS, ADDRESS_WINDOW_MS));
    },
  };
}

/**
 * The counter keys of one sign-in attempt: the account-and-address budget and the address budget.
 * Every check that counts toward the login throttle (password, second factor) uses these keys, so
 * they share one budget.
 */
export function loginThrottleKeys(
  email: string,
  ip: string | null,
): { accountKey: string; addressKey: string } {
  const bucket = addressBucket(ip);
  return {
    accountKey: `login:acct:${digest(`${email}\u0000${bucket}`)}`,
    addressKey: `login:addr:${bucket}`,
  };
}

/**
 * Keeps email addresses out of the counter table (it would otherwise list every address anyone
 * tried), and bounds key length whatever was typed.
 */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
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
