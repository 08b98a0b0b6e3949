import type { AuthContext } from '../../http/guard.ts';
import { type ClientInfo, findUserById, recordAudit, revokeSession } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { SessionRow } from '../../platform/db/schema.ts';
import { findLiveSession, type ListedSession, listLiveSessions } from './session-list.queries.ts';

/** A session as the list shows it. */
function toPublicSession(s: ListedSession, currentId: string) {
  return {
    id: s.id,
    created_at: new Date(Number(s.created_at)).toISOString(),
    last_used_at: new Date(Number(s.last_used_at)).toISOString(),
    user_agent: s.user_agent,
    ip: s.ip,
    amr: sessionAmr(s),
    // docs/api.md §17: a grant's session names its client (the id stays when the client is gone).
    client: s.client_id === null ? null : { client_id: s.client_id, name: s.client_name ?? s.client_id },
    current: s.id === currentId,
  };
}

/** The session's authentication methods (RFC 8176), stored as JSON with it; [] for sessions older than that. */
function sessionAmr(s: SessionRow): string[] {
  if (s.amr === null) return [];
  try {
    const parsed: unknown = JSON.parse(s.amr);
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/** A user's live sessions, newest first as stored (the profile lists them too). */
export async function liveSessions(ctx: AppContext, userId: string): Promise<ListedSession[]> {
  return listLiveSessions(ctx.db, userId, Date.now());
}

/** GET /sessions and GET /users/<id>/sessions: live sessions only. */
export async function sessionList(ctx: AppContext, userId: string, caller: AuthContext) {
  const rows = await liveSessions(ctx, userId);
  return { data: rows.map((s) => toPublicSession(s, caller.session.id)) };
}

/** GET /users/<id>/sessions (admin): 404 for an unknown user. */
export async function userSessionList(ctx: AppContext, userId: string, caller: AuthContext) {
  if (!(await findUserById(ctx.db, userId))) throw new ApiError('not_found', { detail: 'No such user' });
  return sessionList(ctx, userId, caller);
}

/**
 * DELETE /sessions/<id> (own) and /users/<id>/sessions/<session_id> (admin): revoked through auth's
 * revokeSession, the one place a session ends. A session that is not the user's, or not live: 404.
 */
export async function revokeUserSession(
  ctx: AppContext,
  caller: AuthContext,
  userId: string,
  sessionId: string,
  client: ClientInfo,
): Promise<void> {
  const done = await ctx.db.transaction().execute(async (trx) => {
    if (!(await findLiveSession(trx, userId, sessionId, Date.now()))) return false;
    const byAdmin = caller.user.id !== userId;
    await revokeSession(trx, sessionId, byAdmin ? 'admin_revoked' : 'user_revoked');
    await recordAudit(trx, {
      action: 'session.revoke',
      actor: { type: 'user', id: caller.user.id },
      target: { type: 'session', id: sessionId },
      client,
      details: { user_id: userId, by_admin: byAdmin },
    });
    return true;
  });
  if (!done) throw new ApiError('not_found', { detail: 'No such session' });
}
