import type { AppContext } from '../../../kernel/context.types.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import { deleteExpiredModels } from './models.queries.ts';

/** Builds the provider (and makes its RS256 key present) while `oauth` is on. */
function prepare(ctx: AppContext, server: AuthorizationServer): void {
  if (!ctx.modules.isEnabled('oauth')) return;
  server.get().catch((err: unknown) => ctx.log.warn({ err }, 'authorization server not ready'));
}

/**
 * While `oauth` is on, the RS256 key is made present (and the provider built) when the app is built
 * and when the module is switched on, so the JWKS holds it before the first client asks. Not a
 * timer: a subscription to the module switch (the periodic part is the `oauth.sweep` job).
 */
export function watchAuthorizationServer(ctx: AppContext, server: AuthorizationServer): void {
  prepare(ctx, server);
  ctx.modules.onChange(() => prepare(ctx, server));
}

/** The `oauth.sweep` job: expired models go; keys changed elsewhere rebuild the provider. */
export async function sweepOauthModels(ctx: AppContext, server: AuthorizationServer): Promise<void> {
  if (!ctx.modules.isEnabled('oauth')) return;
  // Keys changed elsewhere (rotation, another instance): rebuild before the next request needs it.
  prepare(ctx, server);
  await deleteExpiredModels(ctx.db, Date.now());
}
