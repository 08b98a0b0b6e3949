import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../kernel/context.types.ts';
import type { DB } from '../platform/db/schema.ts';
import { recordAudit } from './audit.queries.ts';
import { countUserLiveSessions, oldestUserLiveSessions } from './session-cap.queries.ts';
import { revokeSession } from './sessions.ts';

/** The reason a session ended to make room for a newer one (docs/auth.md, "How many sessions"). */
export const SESSION_LIMIT_REASON = 'session_limit';

/**
 * OWASP ASVS 5.0 7.1.2, docs/auth.md ("How many sessions"): one account holds at most
 * SESSIONS_PER_USER_MAX live sessions. Called by signIn once the new session is open, in
 * its transaction: when the user now holds more, the oldest (by opening) end — never the new one,
 * which is the newest — each audited as `session.revoke` with reason `session_limit`, and with them
 * the OAuth grants that end with their browser session (revokeSession). Returns how many ended.
 */
export async function endSessionsOverCap(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  userId: string,
): Promise<number> {
  const max = ctx.config.sessionsPerUserMax;
  const now = Date.now();
  const live = await countUserLiveSessions(trx, userId, now);
  if (live <= max) return 0;
  const oldest = await oldestUserLiveSessions(trx, userId, now, live - max);
  for (const { id } of oldest) {
    await revokeSession(trx, id, SESSION_LIMIT_REASON);
    await recordAudit(trx, {
      action: 'session.revoke',
      actor: { type: 'system' },
      target: { type: 'session', id },
      details: { user_id: userId, reason: SESSION_LIMIT_REASON, sessions_max: max },
    });
  }
  return oldest.length;
}
