import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';

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
