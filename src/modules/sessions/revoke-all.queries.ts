import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** A session ended by revokeAllSessionRows: whose it was, and its OAuth client. */
export interface EndedSession {
  id: string;
  user_id: string;
  client_id: string | null;
}

/**
 * Revokes every live session (not yet revoked) in one statement, or every one but those of admins;
 * returns the sessions it ended. One write to `sessions`: every instance's session cache drops what
 * it held (the PostgreSQL triggers announce each row; on SQLite the file's data_version moves).
 */
export async function revokeAllSessionRows(
  db: Db,
  reason: string,
  exceptAdmins: boolean,
  now: number,
): Promise<EndedSession[]> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('revoked_at', 'is', null);
  if (exceptAdmins) {
    query = query.where('user_id', 'not in', (eb) =>
      eb.selectFrom('users').select('users.id').where('users.role', '=', 'admin'),
    );
  }
  return query.returning(['id', 'user_id', 'client_id']).execute();
}
