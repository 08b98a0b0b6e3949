import { deleteCountersBefore } from '../../../identity/budgets/throttle.queries.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { deleteExpiredFlows } from './flow.queries.ts';
import { START_BUDGET_PREFIX, START_WINDOW_MS } from './start-budget.ts';

/**
 * The `providers.prune` job: deletes expired flows, and the start budget's counters whose window is
 * over (idempotent, so every instance runs it).
 */
export async function pruneFlows(ctx: AppContext): Promise<void> {
  const now = Date.now();
  await deleteExpiredFlows(ctx.db, now);
  await deleteCountersBefore(ctx.db, now - START_WINDOW_MS, START_BUDGET_PREFIX);
}
