#!/usr/bin/env node
import { once } from 'node:events';
import { createReadStream, realpathSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Config, ConfigError, loadConfig, readEnvironment } from './config.ts';
import { migrateToLatest, openDatabase } from './db/database.ts';
import { createLogger } from './logger.ts';
import { recordAudit } from './modules/audit/audit.queries.ts';
import { formatFor, readRecords, TransferFileError } from './modules/users/user-transfer.format.ts';
import { exportUsers, ImportFailedError, importUsers } from './modules/users/user-transfer.service.ts';
import { rotateSigningKey } from './security/signing-keys.ts';
import { lowerWorkerPriority } from './worker-priority.ts';

const USAGE = `Usage: gatehouse <command>

Commands:
  serve                      run the service (default)
  migrate                    apply pending database migrations and exit
  create-admin --email <e>   create or promote an admin (password from ADMIN_PASSWORD or a prompt)
  rotate-keys                add a new access-token signing key; old keys verify until their tokens expire
  users import <file|->      import users from JSONL or CSV (by extension, or --format jsonl|csv);
                             options: --dry-run (validate and report, write nothing)
  users export               write every user to stdout as JSONL (or --format csv), password hashes included
  users unlock --email <e>   clear an account's failed-login counts (a locked-out user can sign in again)

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
    const env = readEnvironment();
    const config = loadConfig(command === 'create-admin' ? withoutAdminPair(env) : env);
    switch (command) {
      case 'serve':
        return await serve(config);
      case 'migrate':
        return await migrate(config);
      case 'create-admin':
        return await createAdmin(config, rest, env.ADMIN_PASSWORD);
      case 'rotate-keys':
        return await rotateKeys(config);
      case 'users':
        return await users(config, rest);
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
  // Loaded here, not at the top: the web stack is the slow part of starting, and the other
  // commands (import, export, migrate) do not need it.
  const { startService } = await import('./server.ts');
  const { default: closeWithGrace } = await import('close-with-grace');
  const service = await startService(config, log);
  // Its own messages (a second signal, the 10 s timeout) go to the JSON log, not the console.
  const logger = {
    error: (message: unknown) =>
      message instanceof Error ? log.error({ err: message }, 'shutdown failed') : log.error(String(message)),
  };
  closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
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

/**
 * create-admin names its admin with --email and takes ADMIN_PASSWORD on its own, so the serve-time
 * rule that ADMIN_EMAIL and ADMIN_PASSWORD come as a pair must not refuse it.
 */
function withoutAdminPair(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const { ADMIN_EMAIL: _email, ADMIN_PASSWORD: _password, ...rest } = env;
  return rest;
}

async function createAdmin(config: Config, args: string[], envPassword: string | undefined): Promise<void> {
  const i = args.indexOf('--email');
  const email = i >= 0 ? args[i + 1] : undefined;
  if (!email) throw new CliError('create-admin needs --email <address>');
  const password = envPassword ? envPassword : await promptPassword();
  await withDatabase(config, async (database) => {
    const log = createLogger('silent');
    const { closeContext, createContext } = await import('./context.ts');
    const { createOrPromoteAdmin } = await import('./modules/auth/first-admin.ts');
    const ctx = await createContext(config, database, log);
    try {
      const { checkPasswordPolicy } = await import('./security/password-policy.ts');
      const policy = checkPasswordPolicy(password, { minLength: config.passwordMinLength, email });
      if (!policy.ok) throw new CliError(`password refused: ${policy.reason}`);
      const id = await createOrPromoteAdmin(ctx, email, password, 'cli.create_admin');
      console.log(`admin ${email} ready (id ${id})`);
    } finally {
      await closeContext(ctx);
    }
  });
}

async function rotateKeys(config: Config): Promise<void> {
  await withDatabase(config, async ({ db }) => {
    const kid = await db.transaction().execute(async (trx) => {
      const newKid = await rotateSigningKey(trx);
      await recordAudit(trx, {
        action: 'keys.rotate',
        actor: { type: 'system' },
        target: { type: 'signing_key', id: newKid },
        details: { via: 'cli' },
      });
      return newKid;
    });
    console.log(`new signing key ${kid}; instances pick it up within a minute, old keys keep verifying`);
  });
}

/** Reads `--name value` from args; the rest stay positional. */
function parseArgs(args: string[], options: string[], flags: string[]) {
  const values: Record<string, string> = {};
  const set = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (options.includes(arg)) {
      const value = args[++i];
      if (value === undefined) throw new CliError(`${arg} needs a value`);
      values[arg] = value;
    } else if (flags.includes(arg)) set.add(arg);
    else if (arg.startsWith('--')) throw new CliError(`unknown option ${arg}\n\n${USAGE}`);
    else positional.push(arg);
  }
  return { values, flags: set, positional };
}

async function users(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'import') return usersImport(config, rest);
  if (sub === 'export') return usersExport(config, rest);
  if (sub === 'unlock') return usersUnlock(config, rest);
  throw new CliError(`users needs import, export or unlock\n\n${USAGE}`);
}

async function usersImport(config: Config, args: string[]): Promise<void> {
  const { values, flags, positional } = parseArgs(args, ['--format'], ['--dry-run']);
  const [file, ...extra] = positional;
  if (!file || extra.length > 0) throw new CliError('users import needs exactly one file (or - for stdin)');
  let format: ReturnType<typeof formatFor>;
  try {
    format = formatFor(file === '-' ? '' : file, values['--format']);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (file !== '-') {
    try {
      if (!statSync(file).isFile()) throw new CliError(`${file} is not a file`);
    } catch (err) {
      if (err instanceof CliError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'error');
      throw new CliError(`cannot read ${file}: ${why}`);
    }
  }
  const input = file === '-' ? process.stdin : createReadStream(file);
  const dryRun = flags.has('--dry-run');
  await withDatabase(config, async ({ db }) => {
    try {
      const summary = await importUsers(db, readRecords(input, format), {
        dryRun,
        onProblem: (p) =>
          console.error(`line ${p.line}: ${p.kind === 'invalid' ? 'invalid' : 'skipped'}: ${p.reason}`),
      });
      console.log(
        `${dryRun ? 'dry run: would import' : 'imported'} ${summary.imported} user(s) from ${summary.read} record(s); ` +
          `${summary.duplicates} duplicate(s) and ${summary.invalid} invalid row(s) skipped`,
      );
    } catch (err) {
      if (err instanceof TransferFileError) throw new CliError(err.message);
      if (err instanceof ImportFailedError) {
        throw new CliError(
          `import stopped by a database error after ${err.summary.imported} user(s) were imported: ${err.message}`,
        );
      }
      throw err;
    }
  });
}

async function usersExport(config: Config, args: string[]): Promise<void> {
  const { values, positional } = parseArgs(args, ['--format'], []);
  if (positional.length > 0) throw new CliError('users export writes to stdout and takes no file');
  const format = values['--format'] ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv')
    throw new CliError(`unknown format "${format}": use jsonl or csv`);
  console.error('gatehouse: warning: the export holds password hashes; store and move it like a secret');
  // A reader that stops early (`| head`) closes the pipe: stop quietly rather than crash on EPIPE.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  await withDatabase(config, async ({ db }) => {
    const n = await exportUsers(db, format, async (text) => {
      if (text !== '' && !process.stdout.write(text)) await once(process.stdout, 'drain');
    });
    console.error(`gatehouse: exported ${n} user(s)`);
  });
}

async function usersUnlock(config: Config, args: string[]): Promise<void> {
  const { values, positional } = parseArgs(args, ['--email'], []);
  const raw = values['--email'];
  if (!raw || positional.length > 0) throw new CliError('users unlock needs --email <address>');
  const { normalizeEmail } = await import('./modules/users/email.ts');
  const email = normalizeEmail(raw);
  if (email === null) throw new CliError(`"${raw}" is not a valid e-mail address`);
  await withDatabase(config, async ({ db }) => {
    const { unlockUserByEmail } = await import('./modules/users/unlock.service.ts');
    const cleared = await unlockUserByEmail(db, email, {
      actor: { type: 'system' },
      client: { ip: null, userAgent: null },
    });
    if (cleared === undefined) throw new CliError(`no user with the e-mail ${email}`);
    console.log(`unlocked ${email} (${cleared} failed-login counter(s) cleared)`);
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
