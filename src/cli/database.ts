import type { Config } from '../config.ts';
import { checkConnection } from '../db/connection-check.ts';
import { type Database, migrateToLatest, openDatabase } from '../db/database.ts';

/** Opens the configured database, checks it answers, migrates it, runs `fn`, and closes it. */
export async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(config.databaseUrl, { poolMax: 2 });
  try {
    await checkConnection(database, config.databaseUrl);
    await migrateToLatest(database.db);
    return await fn(database);
  } finally {
    await database.close();
  }
}
