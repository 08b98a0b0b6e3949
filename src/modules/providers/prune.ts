import type { AppContext } from '../../context.ts';
import { deleteExpiredFlows } from './providers.queries.ts';

const PRUNE_INTERVAL_MS = 10 * 60_000;

/** Deletes expired flows on a timer (idempotent, so every instance runs it); they guard nothing. */
export function pruneFlows(ctx: AppContext): void {
  const timer = setInterval(() => {
    deleteExpiredFlows(ctx.db, Date.now()).catch((err: unknown) =>
      ctx.log.warn({ err }, 'expired provider flow pruning failed'),
    );
  }, PRUNE_INTERVAL_MS);
  timer.unref();
  ctx.closers.push(() => clearInterval(timer));
}
