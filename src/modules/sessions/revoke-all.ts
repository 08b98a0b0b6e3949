import type { Kysely } from 'kysely';
import { type AuditEvent, recordAudits, revokeAllSessionRows } from '../../identity/index.ts';
import type { DB } from '../../platform/db/schema.ts';

/** Audit rows per statement: well under both engines' limit on bound parameters. */
const AUDIT_BATCH = 500;

/** What `gatehouse sessions revoke-all` did. */
export interface RevokeAllResult {
  sessions: number;
  users: number;
}

/**
 * Ends every session of every user (or of every user but the admins), as an operator does after a
 * suspected compromise (docs/auth.md, "Sessions"): refresh tokens stop at once, and access tokens
 * are refused by every instance within the bound of docs/api.md §16, as for any revocation. Each
 * ended session gets its `session.revoke` audit entry (system actor, `via: cli.sessions_revoke_all`),
 * hence its `session.revoked` event, in the transaction that ended it.
 */
export async function revokeAllSessions(
  db: Kysely<DB>,
  options: { exceptAdmins: boolean },
): Promise<RevokeAllResult> {
  return db.transaction().execute(async (trx) => {
    const now = Date.now();
    const ended = await revokeAllSessionRows(trx, 'revoked_by_operator', options.exceptAdmins, now);
    const entries: AuditEvent[] = ended.map((s) => ({
      action: 'session.revoke',
      actor: { type: 'system' },
      target: { type: 'session', id: s.id },
      at: now,
      details: {
        user_id: s.user_id,
        reason: 'revoked_by_operator',
        via: 'cli.sessions_revoke_all',
        except_admins: options.exceptAdmins,
        ...(s.client_id !== null && { client_id: s.client_id }),
      },
    }));
    for (let i = 0; i < entries.length; i += AUDIT_BATCH) {
      await recordAudits(trx, entries.slice(i, i + AUDIT_BATCH));
    }
    return { sessions: ended.length, users: new Set(ended.map((s) => s.user_id)).size };
  });
}
