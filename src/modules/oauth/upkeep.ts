import type { AppContext } from '../../context.ts';
import { deleteExpiredModels } from './models.queries.ts';
import { authorizationServer } from './provider.ts';

/**
 * While `oauth` is on: the RS256 key is made present (and the provider built) at start and when
 * the module is switched on, so the JWKS holds it before the first client asks; expired models are
 * swept every minute.
 */
export function startOauthUpkeep(ctx: AppContext): void {
  const prepare = () => {
    if (!ctx.modules.isEnabled('oauth')) return;
    authorizationServer(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'authorization server not ready'));
  };
  prepare();
  ctx.modules.onChange(prepare);
  const sweep = setInterval(() => {
    if (!ctx.modules.isEnabled('oauth')) return;
    deleteExpiredModels(ctx.db, Date.now()).catch((err: unknown) =>
      ctx.log.warn({ err }, 'oauth model sweep failed'),
    );
    // Keys changed elsewhere (rotation, another instance): rebuild before the next request needs it.
    prepare();
  }, 60_000);
  sweep.unref();
  ctx.closers.push(() => clearInterval(sweep));
}
