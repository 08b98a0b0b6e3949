import type { Db, SessionRow, UserRow } from '../platform/db/schema.ts';

/** A session and its user, as the guard checks them. */
export interface SessionWithUser {
  session: SessionRow;
  user: UserRow;
}

/** Every users column, read beside the session under `guard_user_<column>`. */
const USER_COLUMNS = [
  'id',
  'email',
  'name',
  'role',
  'status',
  'password_hash',
  'email_verified',
  'created_at',
  'updated_at',
  'last_login_at',
  'created_via',
  'kind',
  'locale',
] as const satisfies ReadonlyArray<keyof UserRow>;
// A column added to users and not listed above fails to compile here: the guard sees every column.
const everyUserColumn: Exclude<keyof UserRow, (typeof USER_COLUMNS)[number]> extends never ? true : never =
  true;
void everyUserColumn;
const USER_PREFIX = 'guard_user_';

/**
 * A session with its user; null when either is gone. One statement (one round trip on PostgreSQL,
 * where the session cache's misses go to the database: docs/benchmarks.md): the session's every
 * column, and the user's, each under a prefix of its own.
 */
export async function findSessionWithUser(db: Db, sessionId: string): Promise<SessionWithUser | null> {
  const row = await db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('s')
    .select(USER_COLUMNS.map((c) => `u.${c} as ${USER_PREFIX}${c}` as const))
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
  if (!row) return null;
  const session: Record<string, unknown> = {};
  const user: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(USER_PREFIX)) user[key.slice(USER_PREFIX.length)] = value;
    else session[key] = value;
  }
  return { session: session as unknown as SessionRow, user: user as unknown as UserRow };
}

/** Stores a new session. */
export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

/** Revokes sessions of a user (all, or all but one); returns how many were revoked. */
export async function revokeUserSessions(
  db: Db,
  userId: string,
  reason: string,
  exceptSessionId?: string,
): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: Date.now(), revoked_reason: reason })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Revokes one session, and with it the OAuth grants' sessions that end with it (docs/api.md §17:
 * a logout ends the grants without `offline_access` opened from that browser session). Returns
 * those grants' sessions, for their audit entries (sessions.ts).
 */
export async function revokeSessionRows(
  db: Db,
  sessionId: string,
  reason: string,
): Promise<Array<{ id: string; user_id: string; client_id: string | null }>> {
  const now = Date.now();
  const children = await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('parent_id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .returning(['id', 'user_id', 'client_id'])
    .execute();
  await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
  return children;
}

/**
 * Revokes the sessions of one OAuth client: a user's (a connected app taken back), or everyone's
 * (`userId` null: the client deleted). Returns how many.
 */
export async function revokeClientSessions(
  db: Db,
  userId: string | null,
  clientId: string,
  reason: string,
): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: Date.now(), revoked_reason: reason })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null);
  if (userId !== null) query = query.where('user_id', '=', userId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A grant's session stops ending with its browser session (an `offline_access` token was issued). */
export async function detachSession(db: Db, sessionId: string): Promise<void> {
  // Only a session still tied to a browser is written: a write to sessions empties every
  // instance's session cache (auth-writes), and each offline code exchange asks again.
  await db
    .updateTable('sessions')
    .set({ parent_id: null })
    .where('id', '=', sessionId)
    .where('parent_id', 'is not', null)
    .execute();
}

/**
 * Whether a session can still be used: not revoked, not expired, its user active. Read from the
 * database on every call (no cache), so an ending is seen by every instance at once.
 */
export async function isSessionLive(db: Db, sessionId: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select('sessions.id')
    .where('sessions.id', '=', sessionId)
    .where('sessions.revoked_at', 'is', null)
    .where('sessions.expires_at', '>', now)
    .where('users.status', '=', 'active')
    .executeTakeFirst();
  return row !== undefined;
}

/** Sessions that can still be used (metrics). */
export async function countLiveSessions(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Stores a new refresh token (by hash) for a session. */
export async function insertRefreshToken(
  db: Db,
  p: { id: string; sessionId: string; tokenHash: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      id: p.id,
      session_id: p.sessionId,
      token_hash: p.tokenHash,
      created_at: p.createdAt,
      expires_at: p.expiresAt,
      rotated_at: null,
      successor_box: null,
    })
    .execute();
}

/**
 * Records a successful login: `last_login_at`, and the upgraded hash when the parameters changed.
 * `updated_at` is left alone — it tracks changes to the account, not its use.
 */
export async function recordLogin(db: Db, userId: string, at: number, newHash: string | null): Promise<void> {
  await db
    .updateTable('users')
    .set(newHash === null ? { last_login_at: at } : { last_login_at: at, password_hash: newHash })
    .where('id', '=', userId)
    .execute();
}

/** Marks a refresh token used, keeping its sealed successor for grace-window replays. */
export async function markRotated(
  db: Db,
  id: string,
  rotatedAt: number,
  successorBox: string,
): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ rotated_at: rotatedAt, successor_box: successorBox })
    .where('id', '=', id)
    .execute();
}

/** Records session use and slides its expiry along with the newest refresh token. */
export async function touchSession(db: Db, id: string, usedAt: number, expiresAt: number): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_used_at: usedAt, expires_at: expiresAt })
    .where('id', '=', id)
    .execute();
}

/** Deletes refresh tokens past their expiry (rotated ones included: past expiry a replay is refused anyway). */
export async function deleteExpiredRefreshTokens(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('refresh_tokens').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

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
