import type { Endpoint } from '../http/endpoint.ts';
import type { ApiForm, Config } from '../platform/config.ts';
import type { DialectName } from '../platform/db/dialect.ts';
import type { AppContext } from './context.ts';
import type { HealthCheck } from './health-check.ts';
import type { ModuleCatalog, ModuleName } from './module-state.ts';

/** What a module's endpoint factory may ask of the registry (complete once the app is built). */
export interface ModuleDirectory {
  /** Every module's public description: the admin module list, the pages' served flows. */
  catalog(): ModuleCatalog;
  /** Why a module cannot be switched on with this configuration (its preconditions), or null. */
  unavailable(name: ModuleName): string | null;
}

/** A background job of a module; the service's one scheduler runs it (src/kernel/scheduler.ts). */
export interface ModuleJob {
  /** `<module>.<what>`, e.g. `auth.prune`: the name in `/health/detailed`. */
  readonly name: string;
  /** For the log line `<what> failed`. */
  readonly what: string;
  readonly everyMs: number;
  /** The first run (default: one period after the start). */
  readonly firstAfterMs?: number;
  readonly run: (ctx: AppContext) => Promise<unknown>;
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

/** One module, declared once in its folder (`<module>/<module>.module.ts`) and listed in registry.ts. */
export interface ModuleDefinition<N extends string = string> {
  /** The name in the module list, the switches and `/health/detailed` (docs/api.md §2). */
  readonly name: N;
  /** A required module is on in every form and cannot be switched off. */
  readonly required: boolean;
  readonly description: string;
  /** The forms (`API_FORM`) in which an optional module starts enabled; a new module: `['FULL']` or none. */
  readonly forms: readonly ApiForm[];
  /**
   * Declares the endpoints. It only declares: no timers (→ `jobs`), no checks of the configuration
   * (→ `preconditions`). Called once per app, whether the module is on or off.
   */
  readonly endpoints: (ctx: AppContext, modules: ModuleDirectory) => Endpoint[];
  /** Background jobs, started with the service whatever the module's switch. */
  readonly jobs?: readonly ModuleJob[];
  /** Extra entries of `/health/detailed` `checks` (each reports `disabled` while it has nothing to check). */
  readonly healthChecks?: Readonly<Record<string, (ctx: AppContext) => Promise<HealthCheck>>>;
  readonly preconditions?: ModulePreconditions;
}

/** Declares a module; the name's literal type becomes part of `ModuleName` once registry.ts lists it. */
export function defineModule<const N extends string>(definition: ModuleDefinition<N>): ModuleDefinition<N> {
  return definition;
}
