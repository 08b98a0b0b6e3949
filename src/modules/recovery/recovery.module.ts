import { defineModule } from '../../kernel/module.ts';
import { recoveryEndpoints } from './recovery.routes.ts';
import { pruneLinksAndBudgets } from './recovery.service.ts';
import { unlockEndpoints } from './unlock.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    recovery: true;
  }
}

export const recoveryModule = defineModule({
  name: 'recovery',
  required: false,
  description: 'Password recovery by e-mailed link',
  forms: ['FULL'],
  // Password recovery (docs/api.md §11) and the admin unlock of its lockouts (docs/security.md).
  endpoints: (ctx) => [...recoveryEndpoints(ctx), ...unlockEndpoints(ctx)],
  jobs: [
    {
      name: 'recovery.prune',
      what: 'link and budget pruning',
      everyMs: 10 * 60_000,
      run: pruneLinksAndBudgets,
    },
  ],
});
