import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { type Config, ConfigError } from '../platform/config.ts';
import { type DialectName, dialectOf, isMissingTable } from '../platform/db/dialect.ts';
import type { DB } from '../platform/db/schema.ts';
import { createModuleState, type ModuleName, type ModuleState } from './module-state.ts';
import { findModule, MODULES } from './registry.ts';

/** The engine a DATABASE_URL names, before anything is opened. */
export function dialectOfUrl(databaseUrl: string): DialectName {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** Why a module cannot be on with this configuration, or null when it can. */
export function preconditionProblem(config: Config, dialect: DialectName, name: ModuleName): string | null {
  return findModule(name)?.preconditions?.unmet(config, dialect) ?? null;
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
  for (const { name } of MODULES) {
    const problem = preconditionProblem(config, dialect, name);
    if (problem !== null && enabled(name)) unmet.push({ name, problem });
  }
  return unmet;
}

/**
 * Modules a setting needs on, with the line the start fails with when one is off: REQUIRE_MFA
 * (docs/mfa.md) needs `mfa`, whose endpoints enrol the factor and complete the sign-in with it.
 */
export function neededBySettings(config: Config): Array<{ name: ModuleName; problem: string }> {
  if (config.requireMfa === 'off') return [];
  return [
    {
      name: 'mfa',
      problem: `REQUIRE_MFA=${config.requireMfa} needs the mfa module on (API_FORM=full, or switch mfa on), or set REQUIRE_MFA=off`,
    },
  ];
}

/** Whether the form alone (no stored switch) turns a module on. */
export function enabledByForm(config: Config, name: ModuleName): boolean {
  const info = findModule(name);
  return info !== undefined && (info.required || info.forms.includes(config.apiForm));
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
  const needed = neededBySettings(config);
  if (unmet.length === 0 && needed.length === 0) return false;
  const path = config.databaseUrl.slice('sqlite:'.length);
  if (dialect === 'postgres' || (path !== ':memory:' && existsSync(path))) return true;
  const blocking =
    unmet.find((u) => enabledByForm(config, u.name)) ?? needed.find((n) => !enabledByForm(config, n.name));
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
    state = await createModuleState(db, config.apiForm, MODULES);
  } catch (err) {
    if (!isMissingTable(err)) throw err;
  }
  const on = state
    ? (name: ModuleName) => state.isEnabled(name)
    : (name: ModuleName) => enabledByForm(config, name);
  const blocking =
    unmetPreconditions(config, dialectOf(db), on)[0] ?? neededBySettings(config).find((n) => !on(n.name));
  if (blocking) throw new ConfigError(blocking.problem);
}
