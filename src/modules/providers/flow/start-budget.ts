import type { Budget } from '../../../identity/budgets/attempt-budget.ts';
import { addressBucket } from '../../../identity/budgets/throttle.ts';

export const START_LIMIT = 60;
export const START_WINDOW_MS = 10 * 60_000;
export const START_BUDGET_PREFIX = 'idp_start:';

/**
 * Sign-ins started at a provider per client address (IPv4, or IPv6 /64): 60 in 10 minutes, the
 * house's budget for public calls that cost database work but check no secret (src/identity/links/budgets.ts,
 * link tokens). A person clicks a provider's button a few times at most; a loop that fills the flow
 * table and makes Gatehouse fetch the provider's discovery gets 429 `rate_limited` with Retry-After.
 */
export function startBudget(ip: string | null): Budget {
  return {
    key: `${START_BUDGET_PREFIX}addr:${addressBucket(ip)}`,
    limit: START_LIMIT,
    windowMs: START_WINDOW_MS,
  };
}
