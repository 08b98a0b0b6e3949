import { v7 as uuidv7 } from 'uuid';
import { claimEventsToFanOut, enabledSubscriptions, subscribes } from '../../identity/index.ts';
import type { Db } from '../../platform/db/schema.ts';
import { anyEventToFanOut, insertFirstAttempts } from './fanout.queries.ts';

export const FANOUT_BATCH = 100;

/**
 * The change's transaction writes one outbox row per event (src/identity/events.ts); this plans
 * its first attempt to every enabled endpoint subscribed to its type, and marks it fanned out, in
 * one transaction: a crash before the commit leaves the event waiting, so none is lost (docs/api.md
 * §19, at least once). A disabled endpoint queues nothing. Returns how many events were fanned out.
 */
export async function fanOutEvents(db: Db): Promise<number> {
  if (!(await anyEventToFanOut(db))) return 0;
  return db.transaction().execute(async (trx) => {
    const events = await claimEventsToFanOut(trx, FANOUT_BATCH);
    if (events.length === 0) return 0;
    const endpoints = await enabledSubscriptions(trx);
    await insertFirstAttempts(
      trx,
      events.flatMap((e) =>
        endpoints
          .filter((s) => subscribes(s.events, e.type))
          .map((s) => ({ id: uuidv7(), endpoint_id: s.id, event_id: e.id, created_at: e.created_at })),
      ),
    );
    return events.length;
  });
}
