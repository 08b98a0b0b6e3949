import { createHash, timingSafeEqual } from 'node:crypto';
import { type AuditActor, type AuditRow, pruneAudit } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { type AuditFilter, type AuditPosition, emailsOfUsers, listAudit } from './audit.queries.ts';
import type { AuditEntry, AuditPage } from './audit.schemas.ts';

/** The actor of a request: the authenticated user, else anonymous. */
export function requestActor(request: { auth: { user: { id: string } } | null }): AuditActor {
  return request.auth ? { type: 'user', id: request.auth.user.id } : { type: 'anonymous' };
}

/** One page of the listing plus the cursor of the next (null on the last page). */
export async function auditPage(
  ctx: AppContext,
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
): Promise<AuditPage> {
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
    throw new ApiError('validation_failed', {
      detail: 'from must not be after to',
      errors: [{ path: '/from', message: 'must not be after to' }],
    });
  }
  const after = cursor === undefined ? null : decodeCursor(cursor);
  const rows = await listAudit(ctx.db, filter, limit + 1, after);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const emails = await emailsOfUsers(ctx.db, userIdsOf(page));
  return {
    data: page.map((row) => toPublicEntry(row, emails)),
    next_cursor: rows.length > limit && last ? encodeCursor({ at: last.at, id: last.id }) : null,
  };
}

/** The distinct user ids a page names, as actor or as target. */
function userIdsOf(rows: readonly AuditRow[]): string[] {
  const ids = new Set<string>();
  for (const row of rows) {
    if (row.actor_type === 'user' && row.actor_id !== null) ids.add(row.actor_id);
    if (row.target_type === 'user' && row.target_id !== null) ids.add(row.target_id);
  }
  return [...ids];
}

function toPublicEntry(row: AuditRow, emails: ReadonlyMap<string, string>): AuditEntry {
  let details: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(row.details);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      details = parsed as Record<string, unknown>;
  } catch {
    // Written by recordAudit only; an unreadable value is shown as empty rather than failing the page.
  }
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    action: row.action,
    outcome: row.outcome,
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    actor_email:
      row.actor_type === 'user' && row.actor_id !== null ? (emails.get(row.actor_id) ?? null) : null,
    target_type: row.target_type,
    target_id: row.target_id,
    target_email:
      row.target_type === 'user' && row.target_id !== null ? (emails.get(row.target_id) ?? null) : null,
    ip: row.ip,
    user_agent: row.user_agent,
    details,
  };
}

// The cursor is opaque to clients: base64url of "at.id.check". The check is a digest of the
// position, so an edited cursor is refused with 400 instead of silently paging from somewhere else.
// It is not a secret MAC: a forged position only moves an admin's own view of a list they may read.
const CURSOR_PART =
  /^(\d{1,16})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{16})$/;

function cursorCheck(at: number, id: string): string {
  return createHash('sha256').update(`gatehouse.audit.cursor:${at}.${id}`).digest('base64url').slice(0, 16);
}

/** Encodes a keyset position as an opaque cursor. */
export function encodeCursor(position: AuditPosition): string {
  const { at, id } = position;
  return Buffer.from(`${at}.${id}.${cursorCheck(at, id)}`).toString('base64url');
}

/** Decodes a cursor; 400 `validation_failed` when it was not made by encodeCursor. */
export function decodeCursor(cursor: string): AuditPosition {
  const invalid = () =>
    new ApiError('validation_failed', {
      detail: 'cursor is not a cursor this endpoint returned',
      errors: [{ path: '/cursor', message: 'is not valid' }],
    });
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid();
  const m = CURSOR_PART.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m) throw invalid();
  const at = Number(m[1]);
  const id = m[2] ?? '';
  const expected = Buffer.from(cursorCheck(at, id));
  const given = Buffer.from(m[3] ?? '');
  if (!Number.isSafeInteger(at) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw invalid();
  }
  return { at, id };
}

/** Deletes entries past AUDIT_RETENTION_DAYS; returns how many. */
export function pruneExpiredAudit(ctx: AppContext, now = Date.now()): Promise<number> {
  return pruneAudit(ctx.db, now - ctx.config.auditRetentionDays * 86_400_000);
}
