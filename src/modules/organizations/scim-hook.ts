import type { ClientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { Db } from '../../platform/db/schema.ts';

// docs/api.md §23: organizations.update tells module sso (which it cannot import) that an
// organization's `scim_group_roles` changed, in its transaction, so the roles are re-applied there.

type Listener = (trx: Db, organizationId: string, client: ClientInfo | null) => Promise<void>;
const listeners = new WeakMap<AppContext, Listener>();

/** Module sso's hook: re-applies group roles when an organization's `scim_group_roles` changes. */
export function onScimGroupRolesChanged(ctx: AppContext, listener: Listener): void {
  listeners.set(ctx, listener);
}

/** Called by organizations.update in its transaction after `scim_group_roles` changed. */
export async function groupRolesChanged(
  ctx: AppContext,
  trx: Db,
  organizationId: string,
  client: ClientInfo | null,
): Promise<void> {
  await listeners.get(ctx)?.(trx, organizationId, client);
}
