import type { Kysely } from 'kysely';
import { dialectOf } from '../../platform/db/dialect.ts';
import type { DB, Db } from '../../platform/db/schema.ts';

/** A claimed attempt with what sending it needs. */
export interface ClaimedAttempt {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  url: string;
  secret_box: string;
  previous_secret_box: string | null;
  previous_secret_until: number | null;
  payload: string;
  event_created_at: number;
}

function dueAttempts(db: Db, now: number, limit: number) {
  return db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .where('endpoint_id', 'in', (eb) =>
      eb.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 1),
    )
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit);
}

/**
 * Claims up to `limit` due attempts of enabled endpoints (the mail outbox's claim: PostgreSQL
 * `for update skip locked` then the lease, so instances never claim each other's rows; SQLite one
 * conditional update, its single writer being the claim).
 */
export async function claimDueAttempts(
  db: Kysely<DB>,
  opts: { now: number; leaseUntil: number; workerId: string; limit: number },
): Promise<ClaimedAttempt[]> {
  // A read first: an idle poll (every second, on every instance) takes no write lock.
  if (!(await dueAttempts(db, opts.now, 1).executeTakeFirst())) return [];
  const lease = { locked_until: opts.leaseUntil, locked_by: opts.workerId };
  let ids: string[];
  if (dialectOf(db) === 'postgres') {
    ids = await db.transaction().execute(async (trx) => {
      const due = await dueAttempts(trx, opts.now, opts.limit).forUpdate().skipLocked().execute();
      if (due.length === 0) return [];
      const rows = await trx
        .updateTable('webhook_deliveries')
        .set(lease)
        .where(
          'id',
          'in',
          due.map((r) => r.id),
        )
        .returning('id')
        .execute();
      return rows.map((r) => r.id);
    });
  } else {
    const rows = await db
      .updateTable('webhook_deliveries')
      .set(lease)
      .where('id', 'in', dueAttempts(db, opts.now, opts.limit))
      .returning('id')
      .execute();
    ids = rows.map((r) => r.id);
  }
  if (ids.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .select([
      'd.id',
      'd.endpoint_id',
      'd.event_id',
      'd.attempt',
      'e.url',
      'e.secret_box',
      'e.previous_secret_box',
      'e.previous_secret_until',
      'v.payload',
      'v.created_at as event_created_at',
    ])
    .where('d.id', 'in', ids)
    .execute();
}

/** Extends this worker's leases on the attempts it has in flight. */
export async function renewLeases(
  db: Db,
  ids: string[],
  workerId: string,
  leaseUntil: number,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: leaseUntil })
    .where('id', 'in', ids)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'pending')
    .execute();
}

/** The outcome of one attempt. */
export interface AttemptResult {
  status: 'delivered' | 'failed';
  responseCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records an attempt (only the lease holder's write counts) and, after a failure within the
 * retry window, plans the next one. Returns false when the row was no longer this worker's.
 */
export async function recordAttempt(
  db: Db,
  a: { id: string; endpointId: string; eventId: string; attempt: number },
  workerId: string,
  result: AttemptResult,
  next: { id: string; at: number } | null,
  now: number,
): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({
      status: result.status,
      response_code: result.responseCode,
      error: result.error,
      duration_ms: result.durationMs,
      next_attempt_at: null,
      locked_until: null,
      locked_by: null,
    })
    .where('id', '=', a.id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return false;
  if (next)
    await insertPendingAttempt(
      db,
      { ...next, endpointId: a.endpointId, eventId: a.eventId },
      a.attempt + 1,
      now,
    );
  return true;
}

/** Plans an attempt (a retry, a manual retry, a test). */
export async function insertPendingAttempt(
  db: Db,
  p: { id: string; at: number; endpointId: string; eventId: string },
  attempt: number,
  now: number,
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({
      id: p.id,
      endpoint_id: p.endpointId,
      event_id: p.eventId,
      attempt,
      status: 'pending',
      response_code: null,
      error: null,
      duration_ms: null,
      created_at: now,
      next_attempt_at: p.at,
      locked_until: null,
      locked_by: null,
    })
    .execute();
}

/** A success clears the endpoint's failing mark. */
export async function markEndpointHealthy(db: Db, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute();
}

/** A failure starts the endpoint's failing mark (kept if already set); returns the mark. */
export async function markEndpointFailing(db: Db, endpointId: string, now: number): Promise<number | null> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now })
    .where('id', '=', endpointId)
    .where('failing_since', 'is', null)
    .execute();
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('failing_since')
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return row?.failing_since ?? null;
}

/** Disables an enabled endpoint; true when this call did it (so the admins are told once). */
export async function disableFailingEndpoint(db: Db, endpointId: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: 'failing', updated_at: now })
    .where('id', '=', endpointId)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The active admins' addresses and languages (told when an endpoint is disabled). */
export function activeAdmins(db: Db): Promise<{ email: string; locale: string | null }[]> {
  return db
    .selectFrom('users')
    .select(['email', 'locale'])
    .where('role', '=', 'admin')
    .where('status', '=', 'active')
    .execute();
}
