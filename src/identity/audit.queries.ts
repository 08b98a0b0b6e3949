import type { Kysely, Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AuditLogTable, DB, Db, UserRow } from '../platform/db/schema.ts';
import { emitForAudits } from './events.ts';

/**
 * The audit writer: every feature records its events through it, in the transaction of the change.
 * Every security-relevant event the audit trail knows. Add new ones here (and to docs/operations.md). */
export const AUDIT_ACTIONS = [
  'login.success',
  'login.failure',
  'logout',
  'refresh.reuse',
  'password.change',
  'user.create',
  'user.update',
  'user.delete',
  'user.role_change',
  'user.status_change',
  'user.unlock',
  'invitation.send',
  'invitation.accept',
  'module.toggle',
  'identity.link',
  'keys.rotate',
  'keys.revoke',
  'password.forgot',
  'password.reset_link',
  'password.reset',
  'email.verification_send',
  'email.verify',
  'email.change_request',
  'email.change',
  'user.signup',
  'login.mfa_required',
  'mfa.totp_enroll',
  'mfa.totp_enable',
  'mfa.totp_disable',
  'mfa.recovery_codes_regenerate',
  'mfa.reset',
  'passkey.add',
  'passkey.rename',
  'passkey.remove',
  'session.revoke',
  'login.email_request',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.secret_rotate',
  'webhook.disable',
  'identity.unlink',
  'idp_provider.create',
  'idp_provider.update',
  'idp_provider.delete',
  'oauth.grant',
  'oauth.grant_revoke',
  'oauth.registration_token_create',
  // docs/api.md §21: the organization actions are the event names (src/identity/events.ts).
  'role.put',
  'role.delete',
  'user.roles_change',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member.added',
  'organization.member.updated',
  'organization.member.removed',
  'organization.invitation.created',
  'organization.invitation.accepted',
  'organization.invitation.revoked',
  'api_key.create',
  'api_key.revoke',
  // docs/api.md §23: an organization's SCIM token made (replacing the previous) or revoked.
  'scim_token.create',
  'scim_token.revoke',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export type AuditOutcome = 'success' | 'failure';
export type AuditTargetType =
  | 'user'
  | 'session'
  | 'module'
  | 'signing_key'
  | 'invitation'
  | 'identity'
  | 'passkey'
  | 'webhook'
  | 'idp_provider'
  | 'oauth_client'
  | 'role'
  | 'organization'
  | 'api_key';

/** Who did it: a signed-in user, the service itself (CLI, background jobs), or nobody known yet. */
export type AuditActor = { type: 'user'; id: string } | { type: 'system' } | { type: 'anonymous' };

/** One audit event as callers describe it. */
export interface AuditEvent {
  action: AuditAction;
  /** Default `success`. */
  outcome?: AuditOutcome;
  actor: AuditActor;
  target?: { type: AuditTargetType; id: string } | null;
  /** Client address and user agent (`clientInfo(req)` of identity/sessions.ts gives this shape). */
  client?: { ip: string | null; userAgent: string | null } | null;
  /** Non-secret facts (changed field names, old/new role…). Secret-looking keys are redacted anyway. */
  details?: Record<string, unknown>;
  /** Epoch ms; default now. */
  at?: number;
  /**
   * The target user as the change left it, or as it was when the change removed the row: its webhook
   * event uses it instead of reading the row (docs/webhooks.md); not stored.
   */
  subject?: UserRow;
}

export type AuditRow = Selectable<AuditLogTable>;

/**
 * Records an audit event. Pass the transaction that makes the change, so the entry commits with
 * it or not at all. Never throws on the shape of `details`; a secret-looking key is stored as
 * `[redacted]`. The event the change stands for (docs/api.md §19, webhooks) is written here too, in
 * the same transaction: one place, so every path that makes a change emits it (./events.ts).
 */
export async function recordAudit(db: Db, event: AuditEvent): Promise<void> {
  await db.insertInto('audit_log').values(toRow(event)).execute();
  await emitForAudits(db, [event]);
}

/** Records several events in one statement (bulk operations such as `users import`). */
export async function recordAudits(db: Db, events: readonly AuditEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.insertInto('audit_log').values(events.map(toRow)).execute();
  await emitForAudits(db, events);
}

function toRow(event: AuditEvent): AuditRow {
  return {
    id: uuidv7(),
    at: event.at ?? Date.now(),
    action: event.action,
    outcome: event.outcome ?? 'success',
    actor_type: event.actor.type,
    actor_id: event.actor.type === 'user' ? event.actor.id : null,
    target_type: event.target?.type ?? null,
    target_id: event.target?.id ?? null,
    ip: event.client?.ip?.slice(0, 64) ?? null,
    user_agent: event.client?.userAgent?.slice(0, 512) ?? null,
    details: JSON.stringify(redact(event.details ?? {}, 0)),
  };
}

// Belt and braces: callers must not pass secrets, but a careless `details: body` must not store one.
const SECRET_KEY = /pass(word|phrase)?|secret|token|hash|authorization|cookie|private|credential|otp/i;
const MAX_DEPTH = 4;
const MAX_STRING = 512;

function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  if (value === null || typeof value !== 'object') {
    return typeof value === 'number' || typeof value === 'boolean'
      ? value
      : value === null
        ? null
        : String(value);
  }
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  // A boolean holds no secret whatever its key says (`rehashed`, `password_set`).
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEY.test(k) && typeof v !== 'boolean' ? '[redacted]' : redact(v, depth + 1);
  return out;
}

/** Every entry about one target, oldest first: its action and details (JSON text). */
export async function auditEntriesOfTarget(
  db: Db,
  targetType: AuditTargetType,
  targetId: string,
): Promise<{ action: string; details: string }[]> {
  return db
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('target_type', '=', targetType)
    .where('target_id', '=', targetId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/**
 * Deletes entries older than `before` in batches (short transactions, so a big backlog never holds
 * a lock for long). Returns how many were deleted.
 */
export async function pruneAudit(db: Kysely<DB>, before: number, batchSize = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_log').select('id').where('at', '<', before).orderBy('at').limit(batchSize),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    total += n;
    if (n < batchSize) return total;
    // Let requests waiting for the (SQLite: single) connection go first between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
