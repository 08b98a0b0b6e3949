import type { AppContext } from '../kernel/context.types.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';
import { CliError } from './command.ts';

/** Opens the configured database, checks it answers, migrates it, runs `fn`, and closes it. */
export async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  // Loaded when a command runs, not when the CLI starts: --help and usage errors stay quick.
  const { migrateToLatest, openDatabase } = await import('../platform/db/database.ts');
  const { checkConnection } = await import('../platform/db/connection-check.ts');
  const database = openDatabase(config.databaseUrl, { poolMax: 2 });
  try {
    await checkConnection(database, config.databaseUrl);
    await migrateToLatest(database.db);
    return await fn(database);
  } finally {
    await database.close();
  }
}

/**
 * Runs `fn` on a full context over the configured database (the services need it: SECRETS_KEY's
 * sealing, the module state, the audit writer), then closes it; an API error a service throws becomes
 * its one-line detail (CliError), as the admin API would have answered it.
 */
export async function withContext(config: Config, fn: (ctx: AppContext) => Promise<void>): Promise<void> {
  await withDatabase(config, async (database) => {
    const { createLogger } = await import('../platform/logger.ts');
    const { closeContext, createContext } = await import('../kernel/context.ts');
    const { ApiError } = await import('../platform/api-error.ts');
    const ctx = await createContext(config, database, createLogger('silent'));
    try {
      await fn(ctx);
    } catch (err) {
      if (err instanceof ApiError) throw new CliError(err.detail ?? err.code);
      throw err;
    } finally {
      await closeContext(ctx);
    }
  });
}
