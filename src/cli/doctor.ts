import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ApiForm, redactUrl } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';
import { defineCommand } from './command.ts';
import { type CheckResult, type Enabled, fail, ok, warn } from './doctor-checks.ts';

export const doctorCommand = defineCommand({
  name: 'doctor',
  summary: 'check the configuration against the running service: one line per check, exit 1 on a failure',
  details: [
    'Checks the database and its migrations, the clock, PUBLIC_URL (it requests the running',
    "service through PUBLIC_URL's /health), TRUST_PROXY, the passkey RP ID and origins, SECRETS_KEY,",
    'SMTP and the identity provider. Each line says ok, warn or fail, and how to fix what is not ok.',
    'It only reads: nothing is migrated or written. Network targets are only the configured',
    'addresses (PUBLIC_URL, SMTP_URL, OIDC_ISSUER, the database) and 127.0.0.1:PORT.',
  ].join('\n'),
  options: {
    'mail-to': { type: 'string', value: 'address', description: 'also send a test mail to this address' },
  },
  async run({ config, values }) {
    const { checkClock, checkPasskeys, checkProxy, checkSecretsKey } = await import('./doctor-checks.ts');
    const { checkIdp, checkPublicUrl, checkSmtp } = await import('./doctor-network.ts');
    const { openDatabase } = await import('../platform/db/database.ts');
    const results: CheckResult[] = [];
    const report = (result: CheckResult) => {
      results.push(result);
      console.log(formatLine(result));
    };
    // Opening a SQLite path that does not exist would create an empty database: say so instead.
    const missing = sqliteFileMissing(config.databaseUrl);
    const database = missing ? null : openDatabase(config.databaseUrl, { poolMax: 2 });
    try {
      const reachable = database
        ? await checkDatabase(config.databaseUrl, database)
        : fail(
            'database',
            `no database file at ${missing}`,
            'check DATABASE_URL (an absolute path is safest); the service creates and migrates the file when it first starts',
          );
      report(reachable);
      const usable = database && reachable.status !== 'fail' ? database : null;
      const enabled = await moduleSwitches(config.apiForm, usable);
      if (usable) report(await guarded('clock', () => checkClock(usable)));
      report(await guarded('public-url', () => checkPublicUrl(config)));
      report(checkProxy(config));
      report(checkPasskeys(config, enabled));
      if (usable) report(await guarded('secrets-key', () => checkSecretsKey(config, usable, enabled)));
      report(await guarded('smtp', () => checkSmtp(config, enabled, values['mail-to'])));
      report(await guarded('idp', () => checkIdp(config, enabled)));
    } finally {
      await database?.close();
    }
    const failed = results.filter((r) => r.status === 'fail').length;
    const warned = results.filter((r) => r.status === 'warn').length;
    console.log(`${failed} failed, ${warned} warnings, ${results.length - failed - warned} ok`);
    if (failed > 0) process.exitCode = 1;
  },
});

/** `fail  public-url   <what was found>. Fix: <what to do>` */
export function formatLine(result: CheckResult): string {
  const fix = result.fix ? `. Fix: ${result.fix}` : '';
  return `${result.status.padEnd(5)} ${result.name.padEnd(12)} ${result.message}${fix}`;
}

/** A check that throws becomes its own fail line; the others still run. */
async function guarded(name: string, check: () => Promise<CheckResult>): Promise<CheckResult> {
  try {
    return await check();
  } catch (err) {
    return fail(
      name,
      `the check failed: ${err instanceof Error ? err.message : String(err)}`,
      'see docs/operations.md',
    );
  }
}

/** Reachable, and every migration this version knows applied (the doctor never migrates). */
async function checkDatabase(url: string, database: Database): Promise<CheckResult> {
  const { checkConnection } = await import('../platform/db/connection-check.ts');
  const { migrations } = await import('../platform/db/migrations/index.ts');
  const { appliedMigrationNames } = await import('../platform/db/database.queries.ts');
  try {
    await checkConnection(database, url);
  } catch (err) {
    return fail(
      'database',
      err instanceof Error ? err.message : String(err),
      'check DATABASE_URL and that the database server runs and accepts this machine',
    );
  }
  let applied: string[];
  try {
    applied = await appliedMigrationNames(database.db);
  } catch {
    applied = [];
  }
  const known = Object.keys(migrations);
  const pending = known.filter((name) => !applied.includes(name));
  const newer = applied.filter((name) => !known.includes(name));
  const where = redactUrl(url);
  if (pending.length > 0) {
    return fail(
      'database',
      `${where}: ${pending.length} migration(s) pending (${pending.join(', ')})`,
      'run gatehouse migrate (the service also migrates when it starts); back the database up first',
    );
  }
  if (newer.length > 0) {
    return warn(
      'database',
      `${where} was migrated by a newer version (${newer.join(', ')} unknown here)`,
      'run the newer version of gatehouse, or see docs/upgrading.md for rolling back',
    );
  }
  return ok('database', `${where} answers; all ${known.length} migrations applied`);
}

/** The absolute path of a SQLite file that does not exist, or null. */
function sqliteFileMissing(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const path = url.slice('sqlite:'.length);
  if (path === ':memory:') return null;
  return existsSync(path) ? null : resolve(path);
}

/** The modules' switches as the service sees them: the form's defaults under the stored overrides. */
async function moduleSwitches(form: ApiForm, database: Database | null): Promise<Enabled> {
  const { createModuleState } = await import('../kernel/module-state.ts');
  const { MODULES } = await import('../kernel/registry.ts');
  try {
    if (!database) throw new Error('no database');
    const state = await createModuleState(database.db, form, MODULES);
    return (name) => state.isEnabled(name);
  } catch {
    // No overrides table yet (an empty database): the form's defaults.
    return (name) => MODULES.some((m) => m.name === name && (m.required || m.forms.includes(form)));
  }
}
