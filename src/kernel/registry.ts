import { describeEndpoint, type Endpoint } from '../http/endpoint.ts';
import { accountModule } from '../modules/account/account.module.ts';
import { adminModule } from '../modules/admin/admin.module.ts';
import { auditModule } from '../modules/audit/audit.module.ts';
import { authModule } from '../modules/auth/auth.module.ts';
import { consoleModule } from '../modules/console/console.module.ts';
import { coreModule } from '../modules/core/core.module.ts';
import { emailModule } from '../modules/email/email.module.ts';
import { healthModule } from '../modules/health/health.module.ts';
import { idpModule } from '../modules/idp/idp.module.ts';
import { invitationsModule } from '../modules/invitations/invitations.module.ts';
import { mfaModule } from '../modules/mfa/mfa.module.ts';
import { oauthModule } from '../modules/oauth/oauth.module.ts';
import { pagesModule } from '../modules/pages/pages.module.ts';
import { passkeysModule } from '../modules/passkeys/passkeys.module.ts';
import { passwordlessModule } from '../modules/passwordless/passwordless.module.ts';
import { providersModule } from '../modules/providers/providers.module.ts';
import { recoveryModule } from '../modules/recovery/recovery.module.ts';
import { registrationModule } from '../modules/registration/registration.module.ts';
import { sessionsModule } from '../modules/sessions/sessions.module.ts';
import { userAdminModule } from '../modules/user-admin/user-admin.module.ts';
import { usersModule } from '../modules/users/users.module.ts';
import { webhooksModule } from '../modules/webhooks/webhooks.module.ts';
import { ConfigError } from '../platform/config.ts';
import type { AppContext } from './context.ts';
import type { HealthCheck } from './health-check.ts';
import type { ModuleDefinition, ModuleDirectory } from './module.ts';
import type { ModuleCatalog } from './module-state.ts';

export type { ModuleCatalog } from './module-state.ts';

/**
 * Every module, in the order of docs/api.md §2 (the module list, `/health/detailed`, the index).
 * Each is declared once, in its folder (`defineModule` in `<module>/<module>.module.ts`); a new
 * optional module is appended here with `forms: ['FULL']` (or none), so forms A and B stay exact.
 */
export const MODULES = [
  coreModule,
  healthModule,
  adminModule,
  authModule,
  usersModule,
  accountModule,
  userAdminModule,
  idpModule,
  invitationsModule,
  // After docs/api.md §2's nine: off in both forms, so their index stays exactly as specified.
  auditModule,
  recoveryModule,
  emailModule,
  registrationModule,
  mfaModule,
  passkeysModule,
  sessionsModule,
  oauthModule,
  providersModule,
  webhooksModule,
  passwordlessModule,
  pagesModule,
  consoleModule,
] as const;

/** A module's name: derived from the list, so a module is named the moment it is listed. */
export type ModuleName = (typeof MODULES)[number]['name'];

/** The names in module order. */
export const MODULE_NAMES: readonly ModuleName[] = MODULES.map((m) => m.name);

/** A module as the registry holds it. */
export type AnyModule = ModuleDefinition<ModuleName>;

/** A module with its endpoints instantiated for one app. */
export interface LoadedModule {
  info: AnyModule;
  endpoints: Endpoint[];
}

/** The module of that name (a name not listed: undefined). */
export function findModule(name: string): AnyModule | undefined {
  return (MODULES as readonly AnyModule[]).find((m) => m.name === name);
}

/**
 * Instantiates every module's endpoints in the order of docs/api.md §2. First each enabled module's
 * preconditions: unmet, the start stops with the one line naming the setting (the start has checked
 * this before opening the database already; this catches an app built another way, e.g. tests);
 * met, its `prepare` runs. No timers start here: the jobs run from the scheduler (`startJobs`).
 */
export function loadModules(ctx: AppContext): LoadedModule[] {
  const all: readonly AnyModule[] = MODULES;
  for (const m of all) {
    if (!ctx.modules.isEnabled(m.name) || m.preconditions === undefined) continue;
    const problem = m.preconditions.unmet(ctx.config, ctx.database.dialect);
    if (problem !== null) throw new ConfigError(problem);
    m.preconditions.prepare?.(ctx);
  }
  let loaded: LoadedModule[] = [];
  const directory: ModuleDirectory = {
    catalog: (): ModuleCatalog =>
      loaded.map(({ info, endpoints }) => ({
        name: info.name,
        required: info.required,
        description: info.description,
        endpoints: endpoints.filter((e) => !e.hidden).map(describeEndpoint),
      })),
    unavailable: (name) => findModule(name)?.preconditions?.unmet(ctx.config, ctx.database.dialect) ?? null,
  };
  loaded = all.map((info) => ({ info, endpoints: info.endpoints(ctx, directory) }));
  return loaded;
}

/** Starts every module's background jobs on the context's scheduler, whatever the module's switch. */
export function startJobs(ctx: AppContext): void {
  for (const m of MODULES as readonly AnyModule[]) {
    for (const job of m.jobs ?? []) ctx.jobs.start({ ...job, run: () => job.run(ctx) });
  }
}

/** The modules' entries of `/health/detailed` `checks`, in module order. */
export function moduleHealthChecks(): Array<[string, (ctx: AppContext) => Promise<HealthCheck>]> {
  return (MODULES as readonly AnyModule[]).flatMap((m) => Object.entries(m.healthChecks ?? {}));
}

/** The index `documentation` of docs/api.md §3: enabled modules' listed endpoints, groups sorted by name. */
export function documentation(
  modules: LoadedModule[],
  isEnabled: (name: ModuleName) => boolean,
): Record<string, Record<string, string>> {
  const groups: Record<string, Record<string, string>> = {};
  for (const { info, endpoints } of modules) {
    if (!isEnabled(info.name)) continue;
    for (const e of endpoints) {
      if (e.hidden) continue;
      groups[e.group] ??= {};
      groups[e.group]![e.label] = describeEndpoint(e);
    }
  }
  return Object.fromEntries(
    Object.keys(groups)
      .sort()
      .map((g) => [g, groups[g]!]),
  );
}
