import { pruneWindows } from '../../identity/budgets/sliding-window.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { defineModule } from '../../kernel/module.ts';
import { apiKeyEndpoints } from './api-keys.routes.ts';
import { revokeOrphanedOrganizationKeys } from './api-keys.service.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    api_keys: true;
  }
}

async function pruneKeyWindows(ctx: AppContext): Promise<void> {
  await pruneWindows(ctx.db);
}

async function revokeOrphans(ctx: AppContext): Promise<void> {
  await revokeOrphanedOrganizationKeys(ctx);
}

export const apiKeysModule = defineModule({
  name: 'api_keys',
  required: false,
  description: 'API keys and service accounts',
  forms: ['FULL'],
  endpoints: apiKeyEndpoints,
  jobs: [
    {
      name: 'api_keys.orphans',
      what: "revoking deleted organizations' keys",
      everyMs: 30_000,
      run: revokeOrphans,
    },
    {
      name: 'api_keys.prune',
      what: 'API key rate windows pruning',
      everyMs: 10 * 60_000,
      run: pruneKeyWindows,
    },
  ],
});
