#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { type Config, ConfigError, loadConfig, readEnvironment } from './config.ts';
import { closeContext, createContext } from './context.ts';
import { migrateToLatest, openDatabase } from './db/database.ts';
import { createLogger } from './logger.ts';
import { createOrPromoteAdmin } from './modules/auth/first-admin.ts';
import { rotateSigningKey } from './security/signing-keys.ts';
import { startService } from './server.ts';
import { lowerWorkerPriority } from './worker-priority.ts';

const USAGE = `Usage: gatehouse <command>

Commands:
  serve                      run the service (default)
  migrate                    apply pending database migrations and exit
  create-admin --email <e>   create or promote an admin (password from ADMIN_PASSWORD or a prompt)
  rotate-keys                add a new access-token signing key; old keys verify until their tokens expire

Configuration comes from the environment and ./.env (see docs/configuration.md).`;

/** A failure the CLI reports in one line, without a stack trace. */
export class CliError extends Error {}

/** Runs one CLI command; exits the process non-zero with one line on failure. */
export async function runCli(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      console.log(USAGE);
      return;
    }
    const config = loadConfig(readEnvironment());
    switch (command) {
      case 'serve':
        return await serve(config);
      case 'migrate':
        return await migrate(config);
      case 'create-admin':
        return await createAdmin(config, rest);
      case 'rotate-keys':
        return await rotateKeys(config);
      default:
        throw new CliError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof ConfigError) console.error(`gatehouse: configuration error: ${err.message}`);
    else if (err instanceof CliError) console.error(`gatehouse: ${err.message}`);
    else console.error(`gatehouse: ${command} failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

async function serve(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const service = await startService(config, log);
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an uncaught error');
    else log.info({ signal }, 'shutting down');
    // app.close() stops accepting, lets in-flight requests finish, then the database closes.
    await service.close();
  });
  const reniced = await lowerWorkerPriority(config.workerNice).catch((err: unknown) => {
    log.warn({ err }, 'could not lower the priority of the hashing threads');
    return 0;
  });
  if (reniced > 0)
    log.info({ threads: reniced, nice: config.workerNice }, 'hashing threads yield to requests');
  await service.app.listen({ port: config.port, host: config.host });
}

async function withDatabase<T>(
  config: Config,
  fn: (db: ReturnType<typeof openDatabase>) => Promise<T>,
): Promise<T> {
  const database = openDatabase(config.databaseUrl, { poolMax: 2 });
  try {
    await migrateToLatest(database.db);
    return await fn(database);
  } finally {
    await database.close();
  }
}

async function migrate(config: Config): Promise<void> {
  const database = openDatabase(config.databaseUrl, { poolMax: 2 });
  try {
    const applied = await migrateToLatest(database.db);
    console.log(
      applied.length
        ? `applied ${applied.length} migration(s): ${applied.join(', ')}`
        : 'database is up to date',
    );
  } finally {
    await database.close();
  }
}

async function createAdmin(config: Config, args: string[]): Promise<void> {
  const i = args.indexOf('--email');
  const email = i >= 0 ? args[i + 1] : undefined;
  if (!email) throw new CliError('create-admin needs --email <address>');
  const password = config.adminPassword ?? (await promptPassword());
  await withDatabase(config, async (database) => {
    const log = createLogger('silent');
    const ctx = await createContext(config, database, log);
    try {
      const { checkPasswordPolicy } = await import('./security/password-policy.ts');
      const policy = checkPasswordPolicy(password, { minLength: config.passwordMinLength, email });
      if (!policy.ok) throw new CliError(`password refused: ${policy.reason}`);
      const id = await createOrPromoteAdmin(ctx, email, password);
      console.log(`admin ${email} ready (id ${id})`);
    } finally {
      await closeContext(ctx);
    }
  });
}

async function rotateKeys(config: Config): Promise<void> {
  await withDatabase(config, async ({ db }) => {
    const kid = await rotateSigningKey(db);
    console.log(`new signing key ${kid}; instances pick it up within a minute, old keys keep verifying`);
  });
}

async function promptPassword(): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('set ADMIN_PASSWORD or run in a terminal to be prompted');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    return await rl.question('Password for the admin: ');
  } finally {
    rl.close();
  }
}

// Run when invoked as the `gatehouse` binary (not when imported by main.ts or tests).
const invoked = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (invoked === fileURLToPath(import.meta.url)) await runCli(process.argv.slice(2));
