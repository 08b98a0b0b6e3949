import type { Transaction } from 'kysely';
import { JOINED_USER_COLUMNS, pickUser } from '../../identity/index.ts';
import type { DialectName } from '../../platform/db/dialect.ts';
import type { DB, UserRow } from '../../platform/db/schema.ts';

/** A refresh token row with what rotation decides on: its session's state and its user. */
export interface RefreshTokenState {
  id: string;
  sessionId: string;
  expiresAt: number;
  rotatedAt: number | null;
  successorBox: string | null;
  sessionRevokedAt: number | null;
  sessionExpiresAt: number;
  sessionCreatedAt: number;
  /** The session's amr (JSON text) and auth_time: its tokens carry them unchanged. */
  sessionAmr: string | null;
  sessionAuthTime: number | null;
  user: UserRow;
}

/**
 * Finds a refresh token by hash with its session and user, in one round trip. On PostgreSQL the
 * token row is locked until the transaction ends, so two concurrent refreshes of one token run one
 * after the other and the second sees the first's rotation. SQLite needs no lock: Kysely's single
 * connection serializes whole transactions.
 */
export async function findRefreshTokenForRotation(
  trx: Transaction<DB>,
  tokenHash: string,
  dialect: DialectName,
): Promise<RefreshTokenState | null> {
  const row = await trx
    .selectFrom('refresh_tokens as rt')
    .innerJoin('sessions as s', 's.id', 'rt.session_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      'rt.id as rt_id',
      'rt.session_id as rt_session_id',
      'rt.expires_at as rt_expires_at',
      'rt.rotated_at as rt_rotated_at',
      'rt.successor_box as rt_successor_box',
      's.revoked_at as s_revoked_at',
      's.expires_at as s_expires_at',
      's.created_at as s_created_at',
      's.amr as s_amr',
      's.auth_time as s_auth_time',
      ...JOINED_USER_COLUMNS,
    ])
    .where('rt.token_hash', '=', tokenHash)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate('rt'))
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.rt_id,
    sessionId: row.rt_session_id,
    expiresAt: row.rt_expires_at,
    rotatedAt: row.rt_rotated_at,
    successorBox: row.rt_successor_box,
    sessionRevokedAt: row.s_revoked_at,
    sessionExpiresAt: row.s_expires_at,
    sessionCreatedAt: row.s_created_at,
    sessionAmr: row.s_amr,
    sessionAuthTime: row.s_auth_time,
    user: pickUser(row),
  };
}
