import { redactUrl } from '../config.ts';
import type { Database } from './database.ts';

/** The database could not be reached at all: nothing was read, migrated or written. */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

/**
 * Round-trips one query before anything else touches the database, so a refused connection, a
 * wrong password or an unreadable file is reported as what it is, not as a failing migration.
 */
export async function checkConnection(database: Database, url: string): Promise<void> {
  try {
    await database.ping();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // The URL names the target (its password hidden); pg's own message names the cause.
    throw new DatabaseUnreachableError(`cannot reach the database ${redactUrl(url)}: ${reason}`);
  }
}
