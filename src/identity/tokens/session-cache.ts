import type { Logger } from 'pino';
import type { Database } from '../../platform/db/database.ts';
import { type Listener, startListener } from '../../platform/db/notifications.ts';
import { findSessionWithUser, type SessionWithUser } from '../sessions.queries.ts';

/** The channel the triggers of migration 20261125060000 announce user and session changes on. */
export const AUTH_CHANNEL = 'gatehouse_auth';

/** Reads the session and user behind a verified token: the guard's one read. */
export interface SessionReader {
  read(sessionId: string): Promise<SessionWithUser | null>;
  /** True while reads may be answered from memory (cache on; on PostgreSQL, LISTEN connected). */
  readonly caching: boolean;
  close(): Promise<void>;
}

export interface SessionReaderOptions {
  /** PostgreSQL session connection for LISTEN; null there: no cache (DATABASE_LISTEN_URL=off). */
  listenUrl: string | null;
  /** Entries kept (least recently read go first); 0 turns the cache off (the bench's A/B). */
  size: number;
  log: Logger;
  /** How often the LISTEN connection proves it is alive and up to date (default HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** How old that proof may be for memory to answer (default FRESH_MS). */
  freshMs?: number;
}

/**
 * docs/api.md §16: a revocation is seen by every instance within 100 ms at p99. A notification
 * normally arrives within milliseconds of the commit; these bound the rest (a slow database, a
 * stalled connection): memory answers only while a heartbeat sent at most FRESH_MS ago has been
 * answered, and PostgreSQL hands a session its pending notifications before that answer, so no
 * cached row can be older than a revocation committed more than FRESH_MS before the read. A
 * heartbeat answered late turns the cache off (reads go to the database), never stale.
 */
export const HEARTBEAT_MS = 25;
export const FRESH_MS = 75;
/** A heartbeat unanswered this long means the connection is dead: it is replaced. */
const DEAD_AFTER_MS = 5000;

interface Entry {
  value: SessionWithUser;
  userId: string;
}

/**
 * The rows behind a verified token, kept in memory and exact whoever writes them:
 * - this process's own writes to `users` or `sessions` are seen at the driver (src/platform/db/auth-writes.ts):
 *   while one is open nothing is served from memory, and when it settles everything is dropped;
 * - PostgreSQL: other instances' writes arrive by NOTIFY from the tables' triggers (the user's id),
 *   and that user's entries are dropped; while the LISTEN connection is down or reconnecting every
 *   read goes to the database, and the cache starts empty when it is back (what was announced
 *   meanwhile is lost); memory answers only while the connection has proven, within FRESH_MS, that
 *   every earlier notification has arrived (HEARTBEAT_MS above); no LISTEN connection
 *   (DATABASE_LISTEN_URL=off): no cache;
 * - SQLite: another process's commit to the file (the CLI) changes PRAGMA data_version: everything
 *   is dropped. Every read waits for a look taken after it began (lookAfter below);
 * - a read overlapping any of these is used but not kept.
 */
export function createSessionReader(database: Database, options: SessionReaderOptions): SessionReader {
  const { db, authWrites } = database;
  const direct: SessionReader = {
    read: (id) => findSessionWithUser(db, id),
    caching: false,
    close: async () => {},
  };
  const postgres = database.dialect === 'postgres';
  if (options.size <= 0 || (postgres && options.listenUrl === null)) return direct;

  const entries = new Map<string, Entry>();
  const byUser = new Map<string, Set<string>>();
  // Bumped by every notification, reconnect and other writer seen; with authWrites.version it tells
  // whether anything may have changed while a read was under way.
  let heard = 0;
  let seenWrites = authWrites.version;
  let seenOthers: number | null = null;

  const clear = () => {
    entries.clear();
    byUser.clear();
  };
  const forget = (sessionId: string) => {
    const entry = entries.get(sessionId);
    if (entry === undefined) return;
    entries.delete(sessionId);
    const sessions = byUser.get(entry.userId);
    sessions?.delete(sessionId);
    if (sessions?.size === 0) byUser.delete(entry.userId);
  };
  const listener: Listener | null =
    postgres && options.listenUrl !== null
      ? startListener({
          connectionString: options.listenUrl,
          channel: AUTH_CHANNEL,
          heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
          deadAfterMs: DEAD_AFTER_MS,
          log: options.log,
          onNotification: (userId) => {
            heard++;
            if (userId === '*') clear();
            else for (const sessionId of [...(byUser.get(userId) ?? [])]) forget(sessionId);
          },
          onConnect: () => {
            heard++;
            clear();
          },
        })
      : null;
  // SQLite: whether another process committed since the last look (a file that cannot be read: yes).
  const othersWrote = (otherWriters: () => number): boolean => {
    let now: number;
    try {
      now = otherWriters();
    } catch {
      seenOthers = null;
      return true;
    }
    const changed = now !== seenOthers;
    seenOthers = now;
    return changed;
  };
  const look = (otherWriters: () => number) => {
    if (othersWrote(otherWriters)) {
      heard++;
      clear();
    }
  };
  /*
   * SQLite: resolves once PRAGMA data_version has been read after this call. Reading it starts and
   * ends a read transaction, two file-lock system calls (~11 µs a request on the bench machine, the
   * whole gap between verify-token on SQLite and on PostgreSQL: docs/benchmarks.md), so one look,
   * in the event loop's next check phase, serves every read that began before it. It stays exact:
   * the look is taken after each waiting read began, so after its request arrived, so after any
   * commit its client could have seen.
   */
  let pendingLook: Promise<void> | null = null;
  const lookAfter = (otherWriters: () => number): Promise<void> =>
    (pendingLook ??= new Promise((resolve) => {
      setImmediate(() => {
        pendingLook = null;
        look(otherWriters);
        resolve();
      });
    }));

  const freshMs = options.freshMs ?? FRESH_MS;
  // PostgreSQL: whether every notification committed up to freshMs ago is known to have arrived.
  const fresh = (): boolean => {
    if (listener === null) return true;
    const proven = listener.provenAt;
    return listener.connected && proven !== null && performance.now() - proven <= freshMs;
  };

  // True when memory may answer; drops everything first if this process wrote since the last look.
  const usable = (): boolean => {
    if (!fresh() || authWrites.open > 0) return false;
    if (authWrites.version !== seenWrites) {
      clear();
      seenWrites = authWrites.version;
    }
    return true;
  };

  return {
    async read(sessionId) {
      const { otherWriters } = authWrites;
      if (otherWriters !== undefined) await lookAfter(otherWriters);
      if (usable()) {
        const hit = entries.get(sessionId);
        if (hit !== undefined) {
          // Re-inserted: the Map's first key is then the least recently read.
          entries.delete(sessionId);
          entries.set(sessionId, hit);
          return hit.value;
        }
      }
      const heardBefore = heard;
      const writesBefore = authWrites.version;
      const value = await findSessionWithUser(db, sessionId);
      // A commit by another process from here on is caught by the look before the next read.
      if (value !== null && usable() && heard === heardBefore && authWrites.version === writesBefore) {
        if (entries.size >= options.size) forget(entries.keys().next().value as string);
        const userId = value.user.id;
        entries.set(sessionId, { value, userId });
        const sessions = byUser.get(userId) ?? new Set<string>();
        sessions.add(sessionId);
        byUser.set(userId, sessions);
      }
      return value;
    },
    get caching() {
      return listener?.connected ?? true;
    },
    close: async () => listener?.stop(),
  };
}
