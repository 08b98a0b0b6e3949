import { createHash } from 'node:crypto';
import type { Budget } from '../budgets/attempt-budget.ts';
import { addressBucket } from '../budgets/throttle.ts';

/*
 * The budgets of docs/api.md §11–12, all kept by src/identity/budgets/attempt-budget.ts. Addresses are digested
 * so the counter table never lists who was mailed; client addresses count per IPv4 or IPv6 /64.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Mails to one address (reset, re-sent invitation, sign-up notice, verification): 3 an hour. Over it: no mail, same answer. */
export function mailBudget(email: string): Budget {
  return { key: `mail:to:${digest(email)}`, limit: 3, windowMs: HOUR };
}

/** Forgot-password requests per client address: 20 an hour (429). */
export function forgotBudget(ip: string | null): Budget {
  return { key: `forgot:addr:${addressBucket(ip)}`, limit: 20, windowMs: HOUR };
}

/** Sign-ups per client address: 10 an hour (429). */
export function signupBudget(ip: string | null): Budget {
  return { key: `signup:addr:${addressBucket(ip)}`, limit: 10, windowMs: HOUR };
}

/** Verification requests per user: 1 a minute and 5 an hour (429). */
export function verificationBudgets(userId: string): Budget[] {
  return [
    { key: `verify:user:1m:${userId}`, limit: 1, windowMs: MINUTE },
    { key: `verify:user:1h:${userId}`, limit: 5, windowMs: HOUR },
  ];
}

/**
 * Link tokens tried per client address (opening or using a reset or verification link): 60 in
 * 10 minutes. A token has 256 bits, so this is not what keeps guessing out; it bounds the database
 * work one client can cause. A live link gives its attempt back.
 */
export function linkBudget(ip: string | null): Budget {
  return { key: `link:addr:${addressBucket(ip)}`, limit: 60, windowMs: 10 * MINUTE };
}

/**
 * Sign-in mails (docs/api.md §20) to one address: 5 an hour, a budget of their own (not recovery's).
 * Over it: no mail, the live pair stays, the same 202.
 */
export function signinMailBudget(email: string): Budget {
  return { key: `signin:mail:${digest(email)}`, limit: 5, windowMs: HOUR };
}

/** E-mail sign-in requests per client address: 20 an hour (429). */
export function signinRequestBudget(ip: string | null): Budget {
  return { key: `signin:addr:${addressBucket(ip)}`, limit: 20, windowMs: HOUR };
}
