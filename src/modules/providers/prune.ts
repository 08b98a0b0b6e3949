import type { AppContext } from '../../context.ts';
import { deleteExpiredFlows } from './providers.queries.ts';

/** The `providers.prune` job: deletes expired flows (idempotent, so every instance runs it). */
export async function pruneFlows(ctx: AppContext): Promise<void> {
  await deleteExpiredFlows(ctx.db, Date.now());
}
