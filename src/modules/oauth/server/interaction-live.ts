import type { AppContext } from '../../../kernel/context.types.ts';
import { sha256 } from './adapter.ts';
import { findModel } from './models.queries.ts';

/**
 * Whether `uid` names a pending authorization request (docs/api.md §18: a sign-in's `return_to` may
 * be a live interaction): the library's Interaction model, stored under the SHA-256 of its id (its
 * uid), not expired and not consumed, while the `oauth` module is on.
 */
export async function isLiveInteraction(ctx: AppContext, uid: string): Promise<boolean> {
  if (!ctx.modules.isEnabled('oauth')) return false;
  const idHash = sha256(uid);
  const row = await findModel(ctx.db, 'Interaction', idHash);
  if (!row || row.consumed_at !== null) return false;
  return row.expires_at === null || Number(row.expires_at) > Date.now();
}
