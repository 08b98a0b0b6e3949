import type { Kysely, Selectable } from 'kysely';
import { dialectOf } from '../db/dialect.ts';
import type { DB, Db, OutboxTable } from '../db/schema.ts';

export type OutboxRow = Selectable<OutboxTable>;

/** Inserts a pending message (in the caller's transaction). */
export async function insertOutboxMessage(db: Db, row: OutboxRow): Promise<void> {
  await db.insertInto('outbox').values(row).execute();
}

export interface ClaimOptions {
  now: number;
  /** Epoch ms until which the claimed messages belong to this worker. */
  leaseUntil: number;
  workerId: string;
  limit: number;
}

/**
 * Claims up to `limit` due pending messages for one worker and returns them. A message is due when
 * its next attempt time has come and nobody holds a live lease on it; a lease left by a crashed
 * worker runs out and the message becomes claimable again.
 *
 * PostgreSQL: `select … for update skip locked` inside a transaction that then writes the lease,
 * so concurrent workers (other instances) never block on, nor claim, each other's rows.
 * SQLite: one conditional `update … returning`; SQLite runs one writer at a time, so the
 * statement is the claim.
 */
export async function claimDueMessages(db: Kysely<DB>, opts: ClaimOptions): Promise<OutboxRow[]> {
  const lease = { locked_until: opts.leaseUntil, locked_by: opts.workerId };
  // The cast only bridges Kysely's variance; dialectOf reads the adapter.
  if (dialectOf(db) === 'postgres') {
    return db.transaction().execute(async (trx) => {
      const due = await dueMessages(trx, opts.now, opts.limit).forUpdate().skipLocked().execute();
      if (due.length === 0) return [];
      return trx
        .updateTable('outbox')
        .set(lease)
        .where(
          'id',
          'in',
          due.map((r) => r.id),
        )
        .returningAll()
        .execute();
    });
  }
  return db
    .updateTable('outbox')
    .set(lease)
    .where('id', 'in', dueMessages(db, opts.now, opts.limit))
    .returningAll()
    .execute();
}

function dueMessages(db: Db, now: number, limit: number) {
  return db
    .selectFrom('outbox')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit);
}

/**
 * Records a delivery. The bodies are blanked: an invitation mail carries a live link, and the
 * database should hold it in plaintext no longer than needed to send it.
 */
export async function markSent(db: Db, id: string, attempts: number, now: number): Promise<void> {
  await db
    .updateTable('outbox')
    .set({
      status: 'sent',
      sent_at: now,
      attempts,
      last_attempt_at: now,
      locked_until: null,
      locked_by: null,
      text_body: '',
      html_body: '',
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

export interface FailureUpdate {
  attempts: number;
  lastError: string;
  now: number;
  /** Null: give up (status `failed`); otherwise the time of the next attempt. */
  nextAttemptAt: number | null;
}

/** Records a failed attempt: retry later, or give up. Only the lease holder may write it. */
export async function markFailed(db: Db, id: string, workerId: string, update: FailureUpdate): Promise<void> {
  const final = update.nextAttemptAt === null;
  await db
    .updateTable('outbox')
    .set({
      attempts: update.attempts,
      last_error: update.lastError,
      last_attempt_at: update.now,
      locked_until: null,
      locked_by: null,
      ...(final
        ? { status: 'failed' as const, text_body: '', html_body: '' }
        : { next_attempt_at: update.nextAttemptAt ?? update.now }),
    })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'pending')
    .execute();
}

/** Gives claimed but unattempted messages back (shutdown, or a lease about to run out). */
export async function releaseClaims(db: Db, ids: string[], workerId: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('outbox')
    .set({ locked_until: null, locked_by: null })
    .where('id', 'in', ids)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * Withdraws messages of a kind to a recipient that have not gone out yet (a re-invitation makes
 * the older mail's link dead). One being sent at this moment may still arrive; that is harmless.
 */
export async function deletePendingMessages(db: Db, recipient: string, kind: string): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('recipient', '=', recipient)
    .where('kind', '=', kind)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes delivered and failed messages created before `before` (their bodies are already blank). */
export async function deleteFinishedBefore(db: Db, before: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('status', 'in', ['sent', 'failed'])
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** What the mailer health check reports, read from the table (the truth across instances). */
export interface OutboxStats {
  pending: number;
  oldestPendingAt: number | null;
  /** The newest failed attempt (of a message still pending, or given up) since `since`. */
  lastFailureAt: number | null;
  lastError: string | null;
  lastSentAt: number | null;
  /** Messages given up since `since`. */
  failedSince: number;
}

/** Messages waiting to be sent (metrics). */
export async function countPendingMessages(db: Db): Promise<number> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Counts and times for the health check; failures before `since` are not looked at. */
export async function outboxStats(db: Db, since: number): Promise<OutboxStats> {
  const pending = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number | null>('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  // Every finished attempt of a pending or failed message was a failure (a success makes it `sent`).
  const lastFailure = await db
    .selectFrom('outbox')
    .select(['last_error', 'last_attempt_at'])
    .where('status', 'in', ['pending', 'failed'])
    .where('last_attempt_at', '>=', since)
    .orderBy('last_attempt_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const sent = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.max<number | null>('sent_at').as('last_sent'))
    .where('status', '=', 'sent')
    .executeTakeFirstOrThrow();
  const failed = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'failed')
    .where('last_attempt_at', '>=', since)
    .executeTakeFirstOrThrow();
  return {
    pending: Number(pending.n),
    oldestPendingAt: pending.oldest === null ? null : Number(pending.oldest),
    lastFailureAt: lastFailure?.last_attempt_at == null ? null : Number(lastFailure.last_attempt_at),
    lastError: lastFailure?.last_error ?? null,
    lastSentAt: sent.last_sent === null ? null : Number(sent.last_sent),
    failedSince: Number(failed.n),
  };
}
