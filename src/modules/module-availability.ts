import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { type Config, ConfigError } from '../config.ts';
import type { AppContext } from '../context.ts';
import { type DialectName, dialectOf, isMissingTable } from '../db/dialect.ts';
import type { DB } from '../db/schema.ts';
import { MODULE_INFO } from './module-info.ts';
import { createModuleState, type ModuleName, type ModuleState } from './module-state.ts';

/** What a module needs to be switched on, decided from the configuration and the engine alone. */
type Precondition = (config: Config, dialect: DialectName) => string | null;

/**
 * Each module's needs (a setting, a key). They read nothing from the database, so the start checks
 * them before the database is opened (src/server.ts, docs/configuration.md "Checked before anything
 * is written"); switching a module on at run time answers 409 `module_unavailable` with the same line.
 */
const PRECONDITIONS: Partial<Record<ModuleName, Precondition>> = {
  // Several PostgreSQL instances must share one key; on SQLite a key file beside the database will do.
  mfa: (config, dialect) =>
    dialect === 'postgres' && config.secretsKey === null
      ? 'SECRETS_KEY must be set to enable the mfa module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
      : null,
  // Client secrets are sealed with SECRETS_KEY (docs/api.md §17), shared by every instance.
  oauth: (config, dialect) =>
    dialect === 'postgres' && config.secretsKey === null
      ? 'SECRETS_KEY must be set to enable the oauth module on PostgreSQL (client secrets are sealed with it; every instance needs the same key; e.g. `openssl rand -base64 32`)'
      : null,
  // docs/api.md §10: provider secrets are sealed with the key every instance shares.
  providers: (config, dialect) =>
    dialect === 'postgres' && config.secretsKey === null
      ? 'SECRETS_KEY must be set to enable the providers module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
      : null,
  // docs/api.md §10: endpoint secrets are sealed with the key every instance shares.
  webhooks: (config, dialect) =>
    dialect === 'postgres' && config.secretsKey === null
      ? 'SECRETS_KEY must be set to enable the webhooks module on PostgreSQL (every instance needs the same key; e.g. `openssl rand -base64 32`)'
      : null,
  // docs/api.md §13: the RP ID must be a domain.
  passkeys: (config) => {
    const { rpId } = config.webauthn;
    if (isIP(rpId) === 0) return null;
    return `WEBAUTHN_RP_ID must be a domain name (localhost works), not the IP address "${rpId}": passkeys need a domain; set WEBAUTHN_RP_ID or use a PUBLIC_URL with a host name`;
  },
};

/** The engine a DATABASE_URL names, before anything is opened. */
export function dialectOfUrl(databaseUrl: string): DialectName {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** Why a module cannot be on with this configuration, or null when it can. */
export function preconditionProblem(config: Config, dialect: DialectName, name: ModuleName): string | null {
  return PRECONDITIONS[name]?.(config, dialect) ?? null;
}

/**
 * The modules whose needs are unmet, with the line saying why, in module order. `enabled` says
 * which modules count (the form's defaults, or those with the stored switches on top).
 */
export function unmetPreconditions(
  config: Config,
  dialect: DialectName,
  enabled: (name: ModuleName) => boolean = (name) => enabledByForm(config, name),
): Array<{ name: ModuleName; problem: string }> {
  const unmet: Array<{ name: ModuleName; problem: string }> = [];
  for (const { name } of MODULE_INFO) {
    const problem = preconditionProblem(config, dialect, name);
    if (problem !== null && enabled(name)) unmet.push({ name, problem });
  }
  return unmet;
}

/** Whether the form alone (no stored switch) turns a module on. */
export function enabledByForm(config: Config, name: ModuleName): boolean {
  const info = MODULE_INFO.find((m) => m.name === name);
  return info !== undefined && (info.required || info.enabledIn.includes(config.apiForm));
}

/**
 * Called as a module's endpoints are declared: when it is on and its needs are unmet, the start stops
 * with the one line naming the variable. The start has checked this before opening the database
 * already; this catches an app built another way (tests) and keeps the rule next to the module.
 */
export function requireForModule(ctx: AppContext, name: ModuleName): void {
  const problem = ctx.modules.isEnabled(name) ? moduleUnavailable(ctx, name) : null;
  if (problem !== null) throw new ConfigError(problem);
}

/** Why a module cannot be switched on now, or null when it can. */
export function moduleUnavailable(ctx: AppContext, name: ModuleName): string | null {
  return preconditionProblem(ctx.config, ctx.database.dialect, name);
}

/**
 * The start's check, part one, before the database is opened (docs/configuration.md, "Checked
 * before anything is written"). Returns whether part two must read the stored module switches: only
 * when a module has unmet needs and the database may hold switches (an existing SQLite file, any
 * PostgreSQL database). On a new database the form decides here, so a refused start creates nothing.
 */
export function checkPreconditionsBeforeOpen(config: Config): boolean {
  const dialect = dialectOfUrl(config.databaseUrl);
  const unmet = unmetPreconditions(config, dialect, () => true);
  if (unmet.length === 0) return false;
  const path = config.databaseUrl.slice('sqlite:'.length);
  if (dialect === 'postgres' || (path !== ':memory:' && existsSync(path))) return true;
  const blocking = unmet.find((u) => enabledByForm(config, u.name));
  if (blocking) throw new ConfigError(blocking.problem);
  return false;
}

/**
 * Part two, on the opened database before it is migrated: the form's defaults with the stored
 * switches on top (read only; none on a database never migrated). A module an admin switched off
 * does not stop the start; one switched on does.
 */
export async function checkPreconditionsWithSwitches(config: Config, db: Kysely<DB>): Promise<void> {
  let state: ModuleState | null = null;
  try {
    state = await createModuleState(db, config.apiForm, MODULE_INFO);
  } catch (err) {
    if (!isMissingTable(err)) throw err;
  }
  const on = state
    ? (name: ModuleName) => state.isEnabled(name)
    : (name: ModuleName) => enabledByForm(config, name);
  const blocking = unmetPreconditions(config, dialectOf(db), on)[0];
  if (blocking) throw new ConfigError(blocking.problem);
}
