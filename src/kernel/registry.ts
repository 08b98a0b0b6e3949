import { describeEndpoint, type Endpoint } from '../http/endpoint.ts';
import { accountModule } from '../modules/account/account.module.ts';
import { adminModule } from '../modules/admin/admin.module.ts';
import { apiKeysModule } from '../modules/api-keys/api-keys.module.ts';
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
import { organizationsModule } from '../modules/organizations/organizations.module.ts';
import { pagesModule } from '../modules/pages/pages.module.ts';
import { passkeysModule } from '../modules/passkeys/passkeys.module.ts';
import { passwordlessModule } from '../modules/passwordless/passwordless.module.ts';
import { providersModule } from '../modules/providers/providers.module.ts';
import { recoveryModule } from '../modules/recovery/recovery.module.ts';
import { registrationModule } from '../modules/registration/registration.module.ts';
import { sessionsModule } from '../modules/sessions/sessions.module.ts';
import { ssoModule } from '../modules/sso/sso.module.ts';
import { userAdminModule } from '../modules/user-admin/user-admin.module.ts';
import { usersModule } from '../modules/users/users.module.ts';
import { webhooksModule } from '../modules/webhooks/webhooks.module.ts';
import { ConfigError } from '../platform/config.ts';
import type { AppContext } from './context.types.ts';
import type { ModuleDefinition, ModuleDirectory } from './module.ts';
import type { ModuleName, ModuleOffers } from './module-names.ts';
import type { ModuleCatalog } from './module-state.ts';
import type { Job } from './scheduler.ts';

export type { ModuleName } from './module-names.ts';
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
  organizationsModule,
  apiKeysModule,
  ssoModule,
  pagesModule,
  consoleModule,
] as const;

/**
 * Every name a module declares (`ModuleNames`, src/kernel/module-names.ts) is listed above: a name
 * declared but not listed makes this line fail to compile, naming it.
 */
type Unlisted = Exclude<ModuleName, (typeof MODULES)[number]['name']>;
export const EVERY_MODULE_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;

/** The names in module order. */
export const MODULE_NAMES: readonly ModuleName[] = MODULES.map((m) => m.name);

/** A module as the registry holds it. */
export type AnyModule = ModuleDefinition<ModuleName>;

/** A module started for one app: its endpoints instantiated, its jobs bound to its state. */
export interface LoadedModule {
  info: AnyModule;
  endpoints: Endpoint[];
  jobs: readonly Job[];
}

/** The module of that name (a name not listed: undefined). */
export function findModule(name: string): AnyModule | undefined {
  return (MODULES as readonly AnyModule[]).find((m) => m.name === name);
}

/**
 * Starts every module for one app and instantiates its endpoints, in the order of docs/api.md §2.
 * First each enabled module's preconditions: unmet, the start stops with the one line naming the
 * setting (the start has checked this before opening the database already; this catches an app
 * built another way, e.g. tests); met, its `prepare` runs. Then every module's `start` makes its
 * state, and its health checks join the context's (after the mailer, in module order). No timers
 * start here: the jobs run from the scheduler (`startJobs`).
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
        groups: [...new Set(endpoints.filter((e) => !e.hidden).map((e) => e.group))],
      })),
    unavailable: (name) => findModule(name)?.preconditions?.unmet(ctx.config, ctx.database.dialect) ?? null,
    offer: <N extends keyof ModuleOffers & ModuleName>(name: N): ModuleOffers[N] => {
      const found = started.find((m) => m.info.name === name);
      if (found === undefined) throw new Error(`module ${name} is not started`);
      // Typed by the module's own declaration: `defineModule` checks its `offer` against ModuleOffers.
      return found.started.offered as ModuleOffers[N];
    },
  };
  const started = all.map((info) => ({ info, started: info.start(ctx) }));
  for (const { started: s } of started) {
    for (const [name, check] of s.healthChecks) ctx.healthChecks.set(name, check);
  }
  loaded = started.map(({ info, started: s }) => ({ info, endpoints: s.endpoints(directory), jobs: s.jobs }));
  return loaded;
}

/** Starts the loaded modules' background jobs on the context's scheduler, whatever the module's switch. */
export function startJobs(ctx: AppContext, modules: readonly LoadedModule[]): void {
  for (const m of modules) for (const job of m.jobs) ctx.jobs.start(job);
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
