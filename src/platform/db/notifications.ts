import type pg from 'pg';
import type { Logger } from 'pino';
import { listen, pingClient } from './database.queries.ts';
import { pgDriver } from './pg-driver.ts';

/** What a LISTEN connection does with what it hears, and how it watches its own health. */
export interface ListenerOptions {
  connectionString: string;
  channel: string;
  /** Called for each notification on the channel (in the order PostgreSQL delivers them). */
  onNotification: (payload: string) => void;
  /**
   * Called after every successful (re)connect. Notifications sent while the connection was down
   * are lost for good, so this is where a follower re-reads the state it tracks.
   */
  onConnect?: () => void;
  log: Logger;
  /** How often the idle connection proves it is alive with `select 1` (default 30 s). */
  heartbeatMs?: number;
  /**
   * How long an unanswered heartbeat may take before the connection is counted dead and replaced
   * (default the interval, at most 10 s). A slow answer past the interval is not a dead connection:
   * no second heartbeat is sent while one is out.
   */
  deadAfterMs?: number;
  /** Back-off between reconnect attempts: doubles from min to max, with jitter (defaults 250 ms, 30 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/** A running LISTEN connection. */
export interface Listener {
  /** True while the connection is up and LISTEN is in effect. */
  readonly connected: boolean;
  /**
   * `performance.now()` when the latest answered heartbeat (or the LISTEN) was sent, null while
   * not connected. PostgreSQL delivers the notifications pending for a session before it answers
   * that session's next query, so every notification committed before this instant has been
   * handed to onNotification: how fresh what the follower knows is proven to be.
   */
  readonly provenAt: number | null;
  /** Stops for good: no more reconnects, the connection is closed. */
  stop(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 3000;

/**
 * Keeps one dedicated connection LISTENing on a channel. LISTEN belongs to a session, so it cannot
 * live in the pool (a pooled client is handed to other queries and may be discarded at any time).
 * When the connection dies, is refused, or stops answering its heartbeat, it reconnects with
 * exponential back-off until `stop()`; errors are logged, never thrown or left unhandled.
 */
export function startListener(options: ListenerOptions): Listener {
  const { channel, log } = options;
  const heartbeatMs = options.heartbeatMs ?? 30_000;
  const deadAfterMs = options.deadAfterMs ?? Math.min(heartbeatMs, 10_000);
  const minBackoffMs = options.minBackoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  let client: pg.Client | null = null;
  let connected = false;
  let provenAt: number | null = null;
  let pinging = false;
  let stopped = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  const scheduleReconnect = () => {
    if (stopped) return;
    const base = Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(failures, 20));
    failures += 1;
    // Jitter: instances that lost the database together do not all come back in the same instant.
    const delay = Math.round(base * (0.5 + Math.random() * 0.5));
    retryTimer = setTimeout(connect, delay);
    retryTimer.unref();
  };

  function connect(): void {
    if (stopped) return;
    const c = new (pgDriver().Client)({
      connectionString: options.connectionString,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      // Names the connection in pg_stat_activity (operators, and the tests that cut it).
      application_name: `gatehouse listen ${channel}`,
    });
    client = c;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      const wasConnected = connected;
      connected = false;
      provenAt = null;
      pinging = false;
      clearInterval(heartbeatTimer);
      if (client === c) client = null;
      // Hard close: a polite end() could wait forever on a connection that no longer answers.
      c.connection.stream.destroy();
      if (stopped) return;
      log.warn(
        { err: describe(err), channel },
        wasConnected
          ? 'database notifications lost, reconnecting'
          : 'database notifications unavailable, retrying',
      );
      scheduleReconnect();
    };
    c.on('error', fail);
    c.on('end', () => fail(new Error('Connection terminated')));
    c.on('notification', (message) => {
      if (message.channel !== channel) return;
      try {
        options.onNotification(message.payload ?? '');
      } catch (err) {
        log.warn({ err }, 'notification handler failed');
      }
    });

    let listenSentAt = 0;
    (async () => {
      await c.connect();
      listenSentAt = performance.now();
      await listen(c, channel);
    })().then(
      () => {
        if (failed) return;
        if (stopped) {
          c.connection.stream.destroy();
          return;
        }
        if (failures > 0) log.info({ channel }, 'database notifications restored');
        failures = 0;
        connected = true;
        provenAt = listenSentAt;
        heartbeatTimer = setInterval(() => heartbeat(c, fail), heartbeatMs);
        heartbeatTimer.unref();
        try {
          options.onConnect?.();
        } catch (err) {
          log.warn({ err }, 'notification reconnect handler failed');
        }
      },
      (err: unknown) => fail(err),
    );
  }

  const heartbeat = (c: pg.Client, fail: (err: unknown) => void) => {
    if (pinging) return;
    pinging = true;
    const sentAt = performance.now();
    const deadline = setTimeout(
      () => fail(new Error('Connection terminated: heartbeat unanswered')),
      deadAfterMs,
    );
    deadline.unref();
    pingClient(c).then(
      () => {
        clearTimeout(deadline);
        if (client !== c || !connected) return;
        pinging = false;
        provenAt = sentAt;
      },
      (err: unknown) => {
        clearTimeout(deadline);
        fail(err);
      },
    );
  };

  connect();

  return {
    get connected() {
      return connected;
    },
    get provenAt() {
      return provenAt;
    },
    async stop() {
      stopped = true;
      connected = false;
      provenAt = null;
      clearTimeout(retryTimer);
      clearInterval(heartbeatTimer);
      const c = client;
      client = null;
      if (!c) return;
      c.removeAllListeners('notification');
      // end() says goodbye to the server; if the connection is already gone it may never settle.
      const ended = c.end().catch(() => {});
      const timer = setTimeout(() => c.connection.stream.destroy(), 1000);
      await ended;
      clearTimeout(timer);
    },
  };
}

/** A log-safe description of a connection failure: code and message, never the connection string. */
function describe(err: unknown): { code?: string; message: string } {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? { code, message: err.message } : { message: err.message };
}
