import type { Db } from '../../platform/db/schema.ts';

const INSERT_SLICE = 500;

/** Whether any event waits for its fan-out: a read, so an idle poll takes no lock. */
export async function anyEventToFanOut(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_events')
    .select('id')
    .where('fanout_pending', '=', 1)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Plans the first attempt of each (event, endpoint), due at the event's commit time. */
export async function insertFirstAttempts(
  db: Db,
  rows: Array<{ id: string; endpoint_id: string; event_id: string; created_at: number }>,
): Promise<void> {
  // In slices: each row binds 12 parameters, well under both engines' limits per statement.
  for (let i = 0; i < rows.length; i += INSERT_SLICE) {
    await db
      .insertInto('webhook_deliveries')
      .values(
        rows.slice(i, i + INSERT_SLICE).map((r) => ({
          ...r,
          attempt: 1,
          status: 'pending' as const,
          response_code: null,
          error: null,
          duration_ms: null,
          next_attempt_at: r.created_at,
          locked_until: null,
          locked_by: null,
        })),
      )
      .execute();
  }
}
