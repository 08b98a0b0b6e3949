import { v7 as uuidv7 } from 'uuid';
import type { Db, UserRow } from '../platform/db/schema.ts';
import {
  clientForEvent,
  deleteEvent,
  enabledSubscriptions,
  insertEvent,
  userForEvent,
} from './events.queries.ts';
import { toPublicUser } from './user.schemas.ts';

/*
 * Events come from ONE place: the audit writer calls `emitForAudits` with every entry it records,
 * in the transaction of the change (docs/api.md §19, "the outbox"). So a change that rolls back
 * emits nothing, every path that makes a change emits its event, and adding an event is one line
 * of the mapping below. Reads: one query on the endpoints table per audited change; nothing more
 * when no enabled endpoint subscribes to the type. Writes: one outbox row per event, however many
 * endpoints subscribe; the delivery worker fans it out to them (the cost of a change stays flat).
 */

/** The event types of docs/api.md §19. */
export const WEBHOOK_EVENT_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.disabled',
  'session.created',
  'session.revoked',
  'password.changed',
  'password.reset',
  'email.verified',
  'email.changed',
  'mfa.enabled',
  'mfa.disabled',
  'passkey.added',
  'passkey.removed',
  'invitation.created',
  'invitation.accepted',
  'oauth.grant.created',
  'oauth.grant.revoked',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member.added',
  'organization.member.updated',
  'organization.member.removed',
  'organization.invitation.created',
  'organization.invitation.accepted',
  'api_key.created',
  'api_key.revoked',
] as const;

/** docs/api.md §21: an organization's events; their audit action is the event name. */
const ORGANIZATION_EVENTS: ReadonlySet<string> = new Set(
  WEBHOOK_EVENT_TYPES.filter((t) => t.startsWith('organization.')),
);

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What the emitter reads of an audit entry (the audit writer's event, structurally). */
export interface AuditedChange {
  action: string;
  outcome?: 'success' | 'failure';
  actor: { type: 'user'; id: string } | { type: 'system' } | { type: 'anonymous' };
  target?: { type: string; id: string } | null;
  details?: Record<string, unknown>;
  at?: number;
  /** The user as the change left it (a sign-in), or as it was when the change removed the row. */
  subject?: UserRow;
}

interface Mapped {
  type: WebhookEventType;
  /** null only for an organization's own events (`organization.created` …), which name no user. */
  userId: string | null;
  extra: Record<string, unknown>;
  system?: boolean;
  /** `oauth.grant.*`: the client, added to the body as `"client": {"client_id","name"}`. */
  clientId?: string;
  /** `api_key.*` (docs/api.md §22): the body has no `user` (an organization may own the key). */
  userless?: true;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
interface SessionExtra {
  id: string;
  client: { client_id: string; name: string | null } | null;
}
/** `"session": {"id","client"}`: the client an app session's audit details name (its name read later when they do not), or null. */
const session = (id: string | null, d: Record<string, unknown> = {}): { session?: SessionExtra } => {
  if (id === null) return {};
  const clientId = str(d.client_id);
  return {
    session: { id, client: clientId === null ? null : { client_id: clientId, name: str(d.client_name) } },
  };
};

/** docs/api.md §23: `user.created` and `user.disabled` of SCIM provisioning carry `"via": "scim"`. */
const scimVia = (d: Record<string, unknown>): { via?: 'scim' } => (d.via === 'scim' ? { via: 'scim' } : {});

/** The event an audit entry stands for, or null (failures, and actions no subscriber hears of). */
function mapAudit(e: AuditedChange): Mapped | null {
  const ok = (e.outcome ?? 'success') === 'success';
  const t = e.target?.id ?? null;
  const d = e.details ?? {};
  const self = e.actor.type === 'user' ? e.actor.id : null;
  const on = (type: WebhookEventType, userId: string | null, extra: Record<string, unknown> = {}) =>
    userId === null ? null : { type, userId, extra };
  // A refresh-token replay is refused (outcome failure) but revokes the session: a real change.
  if (e.action === 'refresh.reuse') {
    const m = on('session.revoked', str(d.user_id), { ...session(t), reason: 'refresh_token_reused' });
    return m && { ...m, system: true };
  }
  if (!ok) return null;
  if (ORGANIZATION_EVENTS.has(e.action)) return organizationEvent(e.action as WebhookEventType, d);
  switch (e.action) {
    case 'user.create':
    case 'user.signup':
      return on('user.created', t, scimVia(d));
    case 'user.update':
    case 'user.role_change':
      return on('user.updated', t);
    case 'user.status_change':
      return on(d.to === 'disabled' ? 'user.disabled' : 'user.updated', t, scimVia(d));
    case 'user.delete':
      return on('user.deleted', t);
    case 'login.success':
      return on('session.created', t, session(str(d.session_id), d));
    case 'logout':
      return on('session.revoked', self, {
        ...session(t),
        ...(d.sessions_revoked !== undefined && { all_sessions: true }),
      });
    case 'session.revoke':
      return on('session.revoked', str(d.user_id), session(t, d));
    case 'password.change':
      return on('password.changed', t);
    case 'password.reset':
      return on('password.reset', t);
    case 'email.verify':
      return on('email.verified', t);
    case 'email.change':
      return on('email.changed', t);
    case 'mfa.totp_enable':
      return on('mfa.enabled', t, { method: 'totp' });
    case 'mfa.totp_disable':
      return on('mfa.disabled', t, { method: 'totp' });
    case 'mfa.reset':
      return on('mfa.disabled', t, { method: 'all' });
    case 'passkey.add':
      return on('passkey.added', self, { passkey: { id: t } });
    case 'passkey.remove':
      return on('passkey.removed', self, { passkey: { id: t } });
    case 'invitation.send':
      return on('invitation.created', str(d.user_id), { invitation: { id: t } });
    case 'invitation.accept':
      return on('invitation.accepted', str(d.user_id), { invitation: { id: t } });
    case 'oauth.grant':
    case 'oauth.grant_revoke': {
      const m = on(
        e.action === 'oauth.grant' ? 'oauth.grant.created' : 'oauth.grant.revoked',
        str(d.user_id),
      );
      return m && t !== null ? { ...m, clientId: t } : null;
    }
    case 'api_key.create':
    case 'api_key.revoke': {
      // details.api_key is the key object the module wrote (never the key or its hash);
      // userId is its owner's, so the actor reads `user` when the owner acted, else `admin`.
      const key = d.api_key as { owner?: { id?: unknown } } | undefined;
      const owner = str(key?.owner?.id);
      if (owner === null) return null;
      const type = e.action === 'api_key.create' ? 'api_key.created' : 'api_key.revoked';
      return { type, userId: owner, extra: { api_key: d.api_key }, userless: true };
    }
    default:
      return null;
  }
}

/**
 * docs/api.md §21, settled details: `data.organization` `{"id","slug","name"}`; member events add
 * `data.user` (the member, from `details.user_id`) and `data.roles`; invitation events add
 * `data.invitation` `{"id","email","roles"}`. The organizations module puts exactly these in the
 * audit entry's details (never a token).
 */
function organizationEvent(type: WebhookEventType, d: Record<string, unknown>): Mapped | null {
  if (typeof d.organization !== 'object' || d.organization === null) return null;
  const userId = str(d.user_id);
  return {
    type,
    userId,
    extra: {
      organization: d.organization,
      ...(Array.isArray(d.roles) && userId !== null && { roles: d.roles }),
      ...(typeof d.invitation === 'object' && d.invitation !== null && { invitation: d.invitation }),
    },
  };
}

/** `actor` of docs/api.md §19: the user themself, an admin acting on them, or the service. */
function actorOf(e: AuditedChange, m: Mapped): { type: 'user' | 'admin' | 'system'; id: string | null } {
  if (m.system === true || e.actor.type === 'system') return { type: 'system', id: null };
  // An organization's events: whoever acted (an admin or the organization's own manager).
  if (m.userId === null)
    return e.actor.type === 'user' ? { type: 'user', id: e.actor.id } : { type: 'system', id: null };
  if (e.actor.type === 'anonymous') {
    // An anonymous invitation is a resend asked by a sign-up with the invited address.
    return m.type === 'invitation.created' ? { type: 'system', id: null } : { type: 'user', id: m.userId };
  }
  return e.actor.id === m.userId ? { type: 'user', id: m.userId } : { type: 'admin', id: e.actor.id };
}

/**
 * "One change, one event": an admin's update writes several audit entries (fields, role, status,
 * password) in one transaction; the subscriber gets the most specific of them only.
 */
const RANK: Partial<Record<WebhookEventType, number>> = {
  'user.updated': 1,
  'password.changed': 2,
  'user.disabled': 3,
};
const emittedInTransaction = new WeakMap<object, Map<string, { rank: number; eventId: string | null }>>();

/** Whether an endpoint's subscription (JSON array text) covers a type. */
export function subscribes(events: string, type: string): boolean {
  try {
    const list: unknown = JSON.parse(events);
    return Array.isArray(list) && (list.includes('*') || list.includes(type));
  } catch {
    return false;
  }
}

/** Writes the events these audit entries stand for, in `db` (the change's transaction). */
export async function emitForAudits(db: Db, entries: readonly AuditedChange[]): Promise<void> {
  const mapped = entries.flatMap((e) => {
    const m = mapAudit(e);
    return m ? [{ e, m }] : [];
  });
  if (mapped.length === 0) return;
  const subscriptions = await enabledSubscriptions(db);
  if (subscriptions.length === 0) return;
  for (const { e, m } of mapped) {
    const rank = RANK[m.type];
    let seen: Map<string, { rank: number; eventId: string | null }> | undefined;
    let replaces: string | null = null;
    if (rank !== undefined && m.userId !== null && db.isTransaction) {
      seen = emittedInTransaction.get(db) ?? new Map();
      emittedInTransaction.set(db, seen);
      const before = seen.get(m.userId);
      if (before && before.rank >= rank) continue;
      replaces = before?.eventId ?? null;
    }
    const endpoints = subscriptions.filter((s) => subscribes(s.events, m.type));
    const user =
      e.subject ??
      (endpoints.length > 0 && m.userId !== null && !m.userless
        ? await userForEvent(db, m.userId)
        : undefined);
    let eventId: string | null = null;
    // An organization's own events and the api_key events name no user; every other event needs its user's row.
    if (endpoints.length > 0 && (user || m.userId === null || m.userless)) {
      const at = e.at ?? Date.now();
      eventId = uuidv7();
      const client = m.clientId === undefined ? undefined : await clientForEvent(db, m.clientId);
      const sessionClient = (m.extra.session as SessionExtra | undefined)?.client;
      if (sessionClient && sessionClient.name === null) {
        sessionClient.name =
          (await clientForEvent(db, sessionClient.client_id))?.name ?? sessionClient.client_id;
      }
      const body = {
        type: m.type,
        timestamp: new Date(at).toISOString(),
        data: {
          ...(user && !m.userless && { user: toPublicUser(user) }),
          actor: actorOf(e, m),
          ...m.extra,
          ...(m.clientId !== undefined && {
            client: { client_id: m.clientId, name: client?.name ?? null },
          }),
        },
      };
      if (replaces !== null) await deleteEvent(db, replaces);
      await insertEvent(db, { id: eventId, type: m.type, payload: JSON.stringify(body), created_at: at });
    } else if (replaces !== null) {
      await deleteEvent(db, replaces);
    }
    if (seen && rank !== undefined && m.userId !== null) seen.set(m.userId, { rank, eventId });
  }
}
