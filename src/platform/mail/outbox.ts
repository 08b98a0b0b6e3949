import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { DB } from '../db/schema.ts';
import type { HealthCheck } from '../health-check.ts';
import { MailDeliveryError, type MailMessage, type MailTransport } from './mailer.ts';
import {
  claimDueMessages,
  deleteFinishedBefore,
  deletePendingMessages,
  insertOutboxMessage,
  markFailed,
  markSent,
  type OutboxRow,
  outboxStats,
  releaseClaims,
} from './outbox.queries.ts';

/** The subset of a pino logger the outbox writes to. */
export interface OutboxLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxOptions {
  db: Kysely<DB>;
  transport: MailTransport;
  log: OutboxLogger;
  /** Attempts before a message is given up (status `failed`). */
  maxAttempts: number;
  /** First retry delay; it doubles per attempt up to RETRY_CAP_MS, with jitter. */
  retryBaseMs: number;
  /** Idle polling period; an enqueue in this process wakes the worker at once. */
  pollMs?: number;
}

/** The transactional outbox: messages are written with the change that caused them, a worker delivers them. */
export interface Outbox {
  /** Writes a message in the caller's transaction; call `nudge()` after the commit to send it at once. */
  enqueue(trx: Transaction<DB> | Kysely<DB>, message: MailMessage, kind: string): Promise<string>;
  /** Withdraws, in the caller's transaction, unsent messages of a kind to a recipient (superseded mail). */
  withdraw(trx: Transaction<DB> | Kysely<DB>, recipient: string, kind: string): Promise<number>;
  /** Wakes the worker (a message was just committed). Harmless when the worker is not running. */
  nudge(): void;
  /** Starts the delivery worker; returns its stop function (waits for the message in flight). */
  start(): () => Promise<void>;
  /** Runs one delivery pass now and resolves when it is done (tests, CLI). */
  drain(): Promise<void>;
  /** The `mailer` check of `/health/detailed`. */
  health(): Promise<HealthCheck>;
}

// A claim outlives the slowest possible send (nodemailer timeouts: 5 s connect, 5 s greeting,
// 10 s per idle socket stage) many times over. Messages of a crashed instance wait this long.
const LEASE_MS = 5 * 60_000;
// Left on a lease before sending; a message closer to expiry is given back instead, so it can
// never be sent by this worker while another one, seeing the lease run out, sends it as well.
const LEASE_SAFETY_MS = 60_000;
const BATCH = 10;
const RETRY_CAP_MS = 60 * 60_000;
const RETENTION_MS = 30 * 24 * 60 * 60_000;
const CLEANUP_EVERY_MS = 60 * 60_000;
const MAX_ERROR_LENGTH = 500;
/** A pending message older than this means mail is stuck: the health check reports `error`. */
export const STUCK_AFTER_MS = 5 * 60_000;
/** How far back the health check looks at failures (and counts given-up messages). */
const HEALTH_WINDOW_MS = 24 * 60 * 60_000;

/** Writes a message in the caller's transaction (the outbox row commits or rolls back with it). */
export async function enqueueMail(
  trx: Transaction<DB> | Kysely<DB>,
  message: MailMessage,
  kind: string,
): Promise<string> {
  const now = Date.now();
  const id = uuidv7();
  await insertOutboxMessage(trx, {
    id,
    kind,
    recipient: message.to,
    subject: message.subject,
    text_body: message.text,
    html_body: message.html,
    lang: message.lang ?? null,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_error: null,
    created_at: now,
    sent_at: null,
    locked_until: null,
    locked_by: null,
    last_attempt_at: null,
  });
  return id;
}

/** Delay before attempt `attempts + 1`: exponential from `baseMs`, capped, "equal jitter" (½ fixed, ½ random). */
export function retryDelayMs(attempts: number, baseMs: number, random: () => number = Math.random): number {
  const exp = Math.min(RETRY_CAP_MS, baseMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * Whether a failure ends the message. A permanent SMTP refusal (5xx) does, except an
 * authentication failure: that is the server's configuration, not the message, and giving up
 * would throw away every queued invitation while an operator fixes the password.
 */
export function isFinalFailure(err: unknown, attempts: number, maxAttempts: number): boolean {
  if (attempts >= maxAttempts) return true;
  return err instanceof MailDeliveryError && err.permanent && err.code !== 'EAUTH';
}

/** `EAUTH 535: SMTP delivery failed: …` — a code first (what the health check shows), then the credential-free text. */
export function describeFailure(err: unknown): string {
  let text: string;
  if (err instanceof MailDeliveryError) {
    const code = [err.code, err.responseCode].filter((p) => p !== undefined).join(' ') || 'ERROR';
    text = `${code}: ${err.message}`;
  } else {
    // Not a transport error (a bug): its text could hold anything, so only its class is kept.
    text = `INTERNAL: ${err instanceof Error ? err.name : 'unknown error'}`;
  }
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

/** Builds the outbox on a database and transport; the worker runs once `start()` is called. */
export function createOutbox(opts: OutboxOptions): Outbox {
  const { db, transport, log } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let started = false;
  let stopping = false;
  let running: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  let lastCleanup = 0;
  // Delivered messages whose `sent` mark failed to commit (database away): retried before any new
  // claim so the lease never runs out on a message that already went out.
  const unmarked = new Map<string, { attempts: number; at: number }>();

  const deliver = async (row: OutboxRow): Promise<void> => {
    const attempts = row.attempts + 1;
    try {
      await transport.send({
        to: row.recipient,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        ...(row.lang === null ? {} : { lang: row.lang }),
      });
    } catch (err) {
      const now = Date.now();
      const final = isFinalFailure(err, attempts, opts.maxAttempts);
      const lastError = describeFailure(err);
      await markFailed(db, row.id, workerId, {
        attempts,
        lastError,
        now,
        nextAttemptAt: final ? null : now + retryDelayMs(attempts, opts.retryBaseMs),
      });
      const entry = { outbox_id: row.id, kind: row.kind, attempts, error: lastError };
      if (final) log.error(entry, 'mail given up');
      else log.warn(entry, 'mail delivery failed; will retry');
      if (!(err instanceof MailDeliveryError)) log.error({ err, outbox_id: row.id }, 'mail transport bug');
      return;
    }
    const now = Date.now();
    try {
      await markSent(db, row.id, attempts, now);
    } catch (err) {
      unmarked.set(row.id, { attempts, at: now });
      log.error({ err, outbox_id: row.id }, 'mail sent but not yet marked; retrying the mark');
      return;
    }
    // The log transport has just said "mail not sent" for this message: "mail sent" would contradict it.
    if (transport.name !== 'log') log.info({ outbox_id: row.id, kind: row.kind, attempts }, 'mail sent');
  };

  const pass = async (): Promise<void> => {
    for (const [id, { attempts, at }] of unmarked) {
      await markSent(db, id, attempts, at);
      unmarked.delete(id);
    }
    do {
      again = false;
      const claimedAt = Date.now();
      const batch = await claimDueMessages(db, {
        now: claimedAt,
        leaseUntil: claimedAt + LEASE_MS,
        workerId,
        limit: BATCH,
      });
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i] as OutboxRow;
        if (stopping || Date.now() > claimedAt + LEASE_MS - LEASE_SAFETY_MS) {
          await releaseClaims(
            db,
            batch.slice(i).map((r) => r.id),
            workerId,
          );
          return;
        }
        await deliver(row);
      }
      if (batch.length === BATCH) again = true;
    } while (again && !stopping);
    if (Date.now() - lastCleanup > CLEANUP_EVERY_MS) {
      lastCleanup = Date.now();
      const removed = await deleteFinishedBefore(db, Date.now() - RETENTION_MS);
      if (removed > 0) log.info({ removed }, 'old outbox rows removed');
    }
  };

  const schedule = (delayMs: number) => {
    if (!started || stopping) return;
    if (timer) clearTimeout(timer);
    // A little jitter keeps instances started together from polling in lockstep.
    timer = setTimeout(run, delayMs + Math.floor(Math.random() * (delayMs / 5)));
    timer.unref();
  };

  const run = (): Promise<void> => {
    if (stopping) return Promise.resolve();
    if (running) {
      // Picked up by the pass in progress, or right after it (see finally).
      again = true;
      return running;
    }
    running = pass()
      .catch((err: unknown) => log.warn({ err }, 'outbox pass failed'))
      .finally(() => {
        running = null;
        schedule(again ? 0 : pollMs);
      });
    return running;
  };

  return {
    enqueue: enqueueMail,
    withdraw: deletePendingMessages,
    nudge() {
      if (started && !stopping) setImmediate(run);
    },
    start() {
      if (started) throw new Error('outbox worker already started');
      started = true;
      schedule(0);
      return async () => {
        stopping = true;
        if (timer) clearTimeout(timer);
        timer = null;
        await running;
      };
    },
    drain: async () => {
      await running;
      await run();
    },
    async health() {
      // docs/api.md §4: a check that is not configured reports only `disabled` (no SMTP_URL: mail goes to the log).
      if (transport.name === 'log') return { status: 'disabled' };
      const now = Date.now();
      const s = await outboxStats(db, now - HEALTH_WINDOW_MS);
      const oldestAgeMs = s.oldestPendingAt === null ? null : Math.max(0, now - s.oldestPendingAt);
      // Stuck: something waits longer than any healthy retry would take, whatever the reason
      // (SMTP away, no worker running). Failing: the newest attempt failed and no delivery since.
      const stuck = oldestAgeMs !== null && oldestAgeMs > STUCK_AFTER_MS;
      const failing = s.lastFailureAt !== null && (s.lastSentAt === null || s.lastFailureAt > s.lastSentAt);
      return {
        status: stuck || failing ? 'error' : 'ok',
        transport: transport.name,
        pending: s.pending,
        oldest_pending_age_s: oldestAgeMs === null ? null : Math.round(oldestAgeMs / 100) / 10,
        failed_24h: s.failedSince,
        // The newest failure of the last 24 h, even if deliveries succeeded since (`status` says
        // whether it is current). Only its code ("ECONNECTION", "EAUTH 535"): this endpoint is
        // public, and the full, credential-free text (outbox row, log) names the SMTP host.
        last_error: s.lastError === null ? null : (s.lastError.split(':')[0] ?? null),
        last_error_at: s.lastFailureAt === null ? null : new Date(s.lastFailureAt).toISOString(),
      };
    },
  };
}
