import { defineModule } from '../../kernel/module.ts';
import { coreEndpoints } from './core.routes.ts';

declare module '../../kernel/module-names.ts' {
  interface ModuleNames {
    core: true;
  }
}

// Toggles made by other instances arrive within the 5 s of docs/api.md §2 (PostgreSQL also pushes
// them); a revoked signing key (`gatehouse rotate-keys --revoke`) is dropped on the same beat
// (docs/operations.md, "A compromised signing key").
const SWITCHES_EVERY_MS = 2000;

export const coreModule = defineModule({
  name: 'core',
  required: true,
  description: 'Service core and its status',
  forms: ['A', 'B', 'FULL'],
  endpoints: coreEndpoints,
  jobs: [
    {
      name: 'core.module_switches',
      what: 'module state refresh',
      everyMs: SWITCHES_EVERY_MS,
      run: (ctx): Promise<void> => ctx.modules.refresh(),
    },
    {
      name: 'core.revoked_keys',
      what: 'signing key revocation check',
      everyMs: SWITCHES_EVERY_MS,
      run: (ctx): Promise<unknown> => ctx.keys.dropRevoked(),
    },
    // A key added by `gatehouse rotate-keys` (or another instance) starts signing here within a minute.
    {
      name: 'core.key_reload',
      what: 'signing key reload',
      everyMs: 60_000,
      run: (ctx): Promise<unknown> => ctx.keys.reload(),
    },
  ],
});
