import type { Kysely, Transaction } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { DB } from './schema.ts';

/**
 * A write that may share a transaction: one statement, or statements that would otherwise each be
 * autocommitted (it must be correct both inside a shared transaction and on its own).
 */
export type Write<T> = (db: Kysely<DB> | Transaction<DB>) => Promise<T>;

export type GroupCommit = <T>(write: Write<T>) => Promise<T>;

const committers = new WeakMap<Kysely<DB>, GroupCommit>();

/**
 * Group commit for SQLite: writes issued in the same turn of the event loop share one commit. On SQLite
 * every commit is an `fsync` made on the event loop (`synchronous = FULL`), so N autocommitted
 * writes of concurrent requests cost N waits during which nothing else runs; here they cost one.
 * Each write still resolves only after the commit that holds it, so nothing is acknowledged
 * before it is on disk.
 *
 * The batch runs at the next turn of the event loop (`setImmediate`), after this turn's I/O
 * callbacks have queued their writes: no timer, no wait beyond that turn. If the shared transaction
 * fails, each write runs again on its own, so one failing write fails only its caller. PostgreSQL
 * groups the commits of concurrent connections itself, and a transaction there costs two more
 * round trips, so there writes run as they come. One committer per database.
 */
export function groupCommit(db: Kysely<DB>): GroupCommit {
  const known = committers.get(db);
  if (known) return known;
  // Inside a caller's transaction the writes are already in one commit.
  const made = dialectOf(db) === 'postgres' || db.isTransaction ? passThrough(db) : batching(db);
  committers.set(db, made);
  return made;
}

function passThrough(db: Kysely<DB>): GroupCommit {
  return (write) => write(db);
}

interface Queued {
  write: Write<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

function batching(db: Kysely<DB>): GroupCommit {
  let pending: Queued[] = [];
  // Promise.resolve first: a write that throws before its first await rejects its caller, not flush.
  const alone = ({ write, resolve, reject }: Queued) =>
    Promise.resolve()
      .then(() => write(db))
      .then(resolve, reject);
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (batch.length === 1) return alone(batch[0] as Queued);
    let results: unknown[];
    try {
      results = await db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const { write } of batch) out.push(await write(trx));
        return out;
      });
    } catch {
      for (const queued of batch) await alone(queued);
      return;
    }
    for (const [i, { resolve }] of batch.entries()) resolve(results[i]);
  };
  return <T>(write: Write<T>) =>
    new Promise<T>((resolve, reject) => {
      const queued = { write, resolve, reject } as Queued;
      if (pending.push(queued) === 1) setImmediate(flush);
    });
}
