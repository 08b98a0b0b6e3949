import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { sqliteReader } from '../../db/database.ts';
import { dialectOf } from '../../db/dialect.ts';
import { preparedQuery } from '../../db/prepared-query.ts';
import type { DB, SessionRow, UserRow } from '../../db/schema.ts';
import { JOINED_USER_COLUMNS, pickUser, userById } from '../users/users.queries.ts';

function sessionWithUserQuery(db: Kysely<DB>, sessionId: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id as s_id',
      's.user_id as s_user_id',
      's.created_at as s_created_at',
      's.last_used_at as s_last_used_at',
      's.expires_at as s_expires_at',
      's.revoked_at as s_revoked_at',
      's.revoked_reason as s_revoked_reason',
      's.user_agent as s_user_agent',
      's.ip as s_ip',
      's.amr as s_amr',
      's.auth_time as s_auth_time',
      ...JOINED_USER_COLUMNS,
    ])
    .where('s.id', '=', sessionId);
}

// The guard runs these on every authenticated request that its cache of callers does not answer;
// building and compiling them each time was a twentieth of a verify-token request.
const sessionWithUser = preparedQuery((db, p: { id: string }) => sessionWithUserQuery(db, p.id));
const sessionById = preparedQuery((db, p: { id: string }) =>
  db.selectFrom('sessions').selectAll().where('id', '=', p.id),
);

/** A session with its user (the guard's hot path): one round trip on PostgreSQL. */
export async function findSessionWithUser(
  db: Kysely<DB>,
  sessionId: string,
): Promise<{ session: SessionRow; user: UserRow } | null> {
  if (dialectOf(db as unknown as Kysely<unknown>) === 'sqlite') {
    // In-process SQLite has no round trip to save, and it answers two primary-key lookups in well
    // under half the time it takes for the join (docs/benchmarks.md).
    const reader = sqliteReader(db);
    if (reader !== undefined && !reader.inTransaction) {
      const read = <T>(query: CompiledQuery<T>) =>
        reader.prepare(query.sql).get(query.parameters) as T | undefined;
      const session = read(sessionById.compile(db, { id: sessionId }));
      const user = session && read(userById.compile(db, { id: session.user_id }));
      return session && user ? { session, user } : null;
    }
    const session = (await sessionById(db, { id: sessionId })).rows[0];
    if (!session) return null;
    const user = (await userById(db, { id: session.user_id })).rows[0];
    return user ? { session, user } : null;
  }
  const { rows } = await sessionWithUser(db, { id: sessionId });
  const row = rows[0];
  if (!row) return null;
  return {
    session: {
      id: row.s_id,
      user_id: row.s_user_id,
      created_at: row.s_created_at,
      last_used_at: row.s_last_used_at,
      expires_at: row.s_expires_at,
      revoked_at: row.s_revoked_at,
      revoked_reason: row.s_revoked_reason,
      user_agent: row.s_user_agent,
      ip: row.s_ip,
      amr: row.s_amr,
      auth_time: row.s_auth_time,
    },
    user: pickUser(row),
  };
}

const sessionInsert = preparedQuery((db, row: SessionRow) => db.insertInto('sessions').values(row));

/** Stores a new session (every login: prepared). */
export async function insertSession(db: Kysely<DB> | Transaction<DB>, row: SessionRow): Promise<void> {
  await sessionInsert(db, row);
}
