import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

/** A write that can run inside a shared transaction or on its own. */
export type Write = (db: Kysely<DB> | Transaction<DB>) => Promise<unknown>;

/**
 * Group commit for SQLite: writes issued while a commit is pending share the next one. On SQLite
 * every commit is an `fsync` made on the event loop (`synchronous = FULL`), so N autocommitted
 * writes of concurrent requests cost N waits; here they cost one. Each write still resolves only
 * after the commit that holds it, so nothing is acknowledged before it is on disk.
 *
 * The batch is run at the next turn of the event loop (`setImmediate`), after the I/O callbacks of
 * this turn have queued their writes: no timer, no added wait beyond that turn. If the shared
 * transaction fails, each write is run again on its own, so one bad write fails only its caller.
 * PostgreSQL groups commits of concurrent connections itself, and a transaction there costs two
 * more round trips, so writes run as they come.
 */
export function groupCommit(db: Kysely<DB>, dialect: 'sqlite' | 'postgres'): (write: Write) => Promise<void> {
  if (dialect === 'postgres') return async (write) => void (await write(db));
  let pending: Array<{ write: Write; resolve: () => void; reject: (err: unknown) => void }> = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (batch.length === 1) {
      const [one] = batch as [(typeof batch)[number]];
      return one.write(db).then(() => one.resolve(), one.reject);
    }
    try {
      await db.transaction().execute(async (trx) => {
        for (const { write } of batch) await write(trx);
      });
      for (const { resolve } of batch) resolve();
    } catch {
      for (const { write, resolve, reject } of batch) await write(db).then(() => resolve(), reject);
    }
  };
  return (write) =>
    new Promise<void>((resolve, reject) => {
      if (pending.push({ write, resolve, reject }) === 1) setImmediate(flush);
    });
}
