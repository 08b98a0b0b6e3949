import { createLoginThrottle } from '../../identity/budgets/throttle.ts';
import { defineModule } from '../../kernel/module.ts';
import { authEndpoints } from './auth.routes.ts';
import { pruneAuthState } from './auth.service.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    auth: true;
  }
}

export const authModule = defineModule({
  name: 'auth',
  required: true,
  description: 'Login, logout, refresh and token verification',
  forms: ['A', 'B', 'FULL'],
  endpoints: authEndpoints,
  jobs: [
    // Spent login counters and expired refresh tokens linger at most this long before they are deleted.
    {
      name: 'auth.prune',
      what: 'auth state pruning',
      everyMs: 10 * 60_000,
      run: (ctx): Promise<unknown> =>
        pruneAuthState(
          ctx,
          createLoginThrottle(ctx.db, { failuresPerAddressPerMin: ctx.config.loginFailuresPerAddressPerMin }),
        ),
    },
  ],
});
