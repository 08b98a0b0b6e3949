import type { Kysely } from 'kysely';
import { clearAccountCounters } from '../../identity/budgets/throttle.ts';
import { findUserByEmail, findUserById, recordAudit } from '../../identity/index.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { DB } from '../../platform/db/schema.ts';
import { parseUserId } from './list/users-list.service.ts';
import type { ChangedBy } from './users.service.ts';

/**
 * Clears an account's failed-login counts from every client address, so its owner can
 * sign in again before the 15-minute window runs out. The per-address budgets stay: they limit a
 * client, not an account. Returns how many counters went; the entry records it.
 */
async function unlock(db: Kysely<DB>, user: { id: string; email: string }, by: ChangedBy): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const cleared = await clearAccountCounters(trx, user.email);
    await recordAudit(trx, {
      action: 'user.unlock',
      actor: by.actor,
      target: { type: 'user', id: user.id },
      client: by.client,
      details: { counters_cleared: cleared },
    });
    return cleared;
  });
}

/** POST /api/v1/users/<id>/unlock (admin; the recovery module). Unknown or malformed id: 404. */
export async function unlockUserById(db: Kysely<DB>, rawId: string, by: ChangedBy): Promise<number> {
  const id = parseUserId(rawId);
  const user = id === null ? undefined : await findUserById(db, id);
  if (!user) throw new ApiError('not_found', { detail: 'No user with this id' });
  return unlock(db, user, by);
}

/** `gatehouse users unlock --email E`; undefined when no account has that (normalized) address. */
export async function unlockUserByEmail(
  db: Kysely<DB>,
  email: string,
  by: ChangedBy,
): Promise<number | undefined> {
  const user = await findUserByEmail(db, email);
  return user ? unlock(db, user, by) : undefined;
}
