import type { AppContext } from '../kernel/context.types.ts';
import type { Db } from '../platform/db/schema.ts';

/**
 * The global roles Gatehouse's own access tokens carry (docs/api.md §21, "Tokens"): read from the
 * `organizations` module's `user_roles` table (reading is free, docs/architecture.md "Tables have
 * owners"; the core names no feature) while that module is on; none while it is off. Sorted.
 * `db` is the caller's transaction where it has one (SQLite has one connection).
 */
export async function tokenRolesOf(ctx: AppContext, userId: string, db: Db = ctx.db): Promise<string[]> {
  if (!ctx.modules.isEnabled('organizations')) return [];
  const rows = await db
    .selectFrom('user_roles')
    .select('role')
    .where('user_id', '=', userId)
    .orderBy('role')
    .execute();
  return rows.map((r) => r.role);
}
