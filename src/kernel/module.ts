import type { Endpoint } from '../http/endpoint.ts';
import type { ApiForm, Config } from '../platform/config.ts';
import type { DialectName } from '../platform/db/dialect.ts';
import type { HealthCheck } from '../platform/health-check.ts';
import type { AppContext } from './context.types.ts';
import type { ModuleName, ModuleOffers, OfferOf } from './module-names.ts';
import type { ModuleCatalog } from './module-state.ts';
import type { Job } from './scheduler.ts';

/** What a module's endpoint factory may ask of the registry (complete once the app is built). */
export interface ModuleDirectory {
  /** Every module's public description: the admin module list, the pages' served flows. */
  catalog(): ModuleCatalog;
  /** Why a module cannot be switched on with this configuration (its preconditions), or null. */
  unavailable(name: ModuleName): string | null;
  /**
   * What a module offers the others from its state (`ModuleOffers`, declared by that module): the
   * one instance its own endpoints use, whether the module is on or off (the caller checks the switch).
   */
  offer<N extends keyof ModuleOffers & ModuleName>(name: N): ModuleOffers[N];
}

/** What the scheduler and `/health/detailed` know of a job: everything but the work. */
export interface ModuleJobInfo {
  /** `<module>.<what>`, e.g. `auth.prune`: the name in `/health/detailed`. */
  readonly name: string;
  /** For the log line `<what> failed`. */
  readonly what: string;
  readonly everyMs: number;
  /** The first run (default: one period after the start). */
  readonly firstAfterMs?: number;
}

/** A background job of a module; the service's one scheduler runs it (src/kernel/scheduler.ts). */
export interface ModuleJob<S = undefined> extends ModuleJobInfo {
  /** Gets the context and the module's state (what its `start` returned). */
  readonly run: (ctx: AppContext, state: S) => Promise<unknown>;
}

/** What a module needs to be switched on. */
export interface ModulePreconditions {
  /**
   * Why the module cannot be on with this configuration, or null. Decided from the configuration and
   * the engine alone: the start checks it before the database is opened, and a switch on at run time
   * answers 409 `module_unavailable` with the same line.
   */
  unmet(config: Config, dialect: DialectName): string | null;
  /** Runs when the app is built with the module on, after `unmet` passed (e.g. make a key file). */
  prepare?(ctx: AppContext): void;
}

/** A module's declaration as written in `<module>/<module>.module.ts`; `S` is its state. */
export interface ModuleSpec<N extends ModuleName, S> {
  /** The name in the module list, the switches and `/health/detailed` (docs/api.md §2). */
  readonly name: N;
  /** A required module is on in every form and cannot be switched off. */
  readonly required: boolean;
  readonly description: string;
  /** The forms (`API_FORM`) in which an optional module starts enabled; a new module: `['FULL']` or none. */
  readonly forms: readonly ApiForm[];
  /**
   * The module's own state for one context (a cache, a client, a built server), made once when the
   * app is built, whether the module is on or off; its endpoints, jobs and health checks receive it.
   * Without `start` the state is `undefined`. It starts no timer (→ `jobs`).
   */
  readonly start?: (ctx: AppContext) => S;
  /** What the other modules may use of the state (declared in `ModuleOffers` under the module's name). */
  readonly offer?: (ctx: AppContext, state: S) => OfferOf<N>;
  /**
   * Declares the endpoints. It only declares: no timers (→ `jobs`), no checks of the configuration
   * (→ `preconditions`), no start-up work (→ `start`). Called once per app, whether the module is on or off.
   */
  readonly endpoints: (ctx: AppContext, modules: ModuleDirectory, state: S) => Endpoint[];
  /** Background jobs, started with the service whatever the module's switch. */
  readonly jobs?: readonly ModuleJob<S>[];
  /** Extra entries of `/health/detailed` `checks` (each reports `disabled` while it has nothing to check). */
  readonly healthChecks?: Readonly<Record<string, (ctx: AppContext, state: S) => Promise<HealthCheck>>>;
  readonly preconditions?: ModulePreconditions;
}

/** One module started for one context: its state bound into its endpoints, jobs and health checks. */
export interface StartedModule {
  endpoints(modules: ModuleDirectory): Endpoint[];
  readonly jobs: readonly Job[];
  readonly healthChecks: ReadonlyArray<[string, () => Promise<HealthCheck>]>;
  /** What `offer` made of the state (undefined without one). */
  readonly offered: unknown;
}

/** One module, declared once in its folder (`<module>/<module>.module.ts`) and listed in registry.ts. */
export interface ModuleDefinition<N extends ModuleName = ModuleName> {
  readonly name: N;
  readonly required: boolean;
  readonly description: string;
  readonly forms: readonly ApiForm[];
  readonly jobs: readonly ModuleJobInfo[];
  readonly preconditions?: ModulePreconditions;
  /** Makes the module's state for one context (its `start`) and binds it. */
  start(ctx: AppContext): StartedModule;
}

/**
 * Declares a module. Its name must be declared in `ModuleNames` (src/kernel/module-names.ts) by the
 * same file; registry.ts then lists it. The state's type stays inside the declaration: what the
 * registry holds is the same for every module.
 */
export function defineModule<const N extends ModuleName, S = undefined>(
  spec: ModuleSpec<N, S>,
): ModuleDefinition<N> {
  const { start, offer, endpoints, jobs = [], healthChecks = {}, ...info } = spec;
  return {
    ...info,
    jobs: jobs.map(({ run: _run, ...job }) => job),
    start(ctx) {
      const state = start === undefined ? (undefined as S) : start(ctx);
      return {
        endpoints: (modules) => endpoints(ctx, modules, state),
        jobs: jobs.map((job) => ({ ...job, run: () => job.run(ctx, state) })),
        healthChecks: Object.entries(healthChecks).map(([name, check]) => [name, () => check(ctx, state)]),
        offered: offer?.(ctx, state),
      };
    },
  };
}
