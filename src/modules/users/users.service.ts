import type { PublicUser } from '../../identity/index.ts';
import {
  type AuditActor,
  type AuditEvent,
  type ClientInfo,
  deleteUserById,
  findUserById,
  insertUser,
  localeOr400,
  lockActiveAdminIds,
  lockUserById,
  newUserRow,
  normalizeEmail,
  recordAudit,
  refuseServiceAccount,
  revokeUserSessions,
  toPublicUser,
  updateUser as updateUserRow,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { Db, UserRow, UserUpdate } from '../../platform/db/schema.ts';
import { revokeOwnerKeys } from '../api-keys/index.ts';
import { parseUserId } from './list/users-list.service.ts';
import type { CreateBody, UpdateBody } from './users.schemas.ts';

/*
 * Reading and changing single users (docs/api.md §6). Rules where the API is silent: docs/users.md.
 */

/** Who asks for a change and from where: the audit entries written with it name them. */
export interface ChangedBy {
  actor: AuditActor;
  client: ClientInfo;
}

/** GET /api/v1/users/<id>: admins read anyone, a user reads themself. */
export async function getUser(ctx: AppContext, caller: UserRow, rawId: string): Promise<PublicUser> {
  const id = idOr404(rawId);
  assertSelfOrAdmin(caller, id);
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound();
  return toPublicUser(user);
}

/** PUT /api/v1/users/<id>: a partial update with the field rules, last-admin protection and revocations. */
export async function updateUser(
  ctx: AppContext,
  caller: UserRow,
  rawId: string,
  body: UpdateBody,
  by: ChangedBy,
): Promise<PublicUser> {
  const id = idOr404(rawId);
  assertSelfOrAdmin(caller, id);
  if (caller.role !== 'admin') {
    // The person's own name and language (docs/api.md §24: `locale` is self-editable like `name`).
    const others = Object.keys(body).filter((k) => k !== 'name' && k !== 'locale');
    if (others.length > 0) {
      throw new ApiError('forbidden', {
        detail: `Only an admin may change ${others.join(', ')}; you may change your name and locale`,
      });
    }
  }
  const patch: UserUpdate = {};
  if (body.name !== undefined) patch.name = body.name.trim();
  if (body.locale !== undefined) patch.locale = localeOr400(body.locale);
  if (body.role !== undefined) patch.role = body.role;
  if (body.status !== undefined) patch.status = body.status;
  if (body.email !== undefined) patch.email = emailOr400(body.email);
  if (body.email_verified !== undefined) patch.email_verified = body.email_verified ? 1 : 0;
  if (body.password !== undefined) {
    // The policy needs the account's email; hashing happens before the transaction, which must
    // never wait on argon2 (on SQLite it would hold the only connection).
    const current = await findUserById(ctx.db, id);
    if (!current) throw notFound();
    checkPassword(ctx, body.password, patch.email ?? current.email);
    patch.password_hash = await ctx.passwords.hash(body.password);
  }

  const changesAdminSet = patch.role !== undefined || patch.status !== undefined;
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const activeAdmins = changesAdminSet ? await lockActiveAdminIds(trx, ctx.database.dialect) : [];
    const before = await lockUserById(trx, id, ctx.database.dialect);
    if (!before) throw notFound();
    if (body.email !== undefined || body.email_verified !== undefined) refuseServiceAccount(before, 'e-mail');
    if (body.password !== undefined) refuseServiceAccount(before, 'password');
    // A new address is unproven until a link proves it, unless the admin vouches in the same call.
    if (patch.email !== undefined && patch.email !== before.email && body.email_verified === undefined) {
      patch.email_verified = 0;
    }
    const after = { ...before, ...patch };
    const wasActiveAdmin = before.role === 'admin' && before.status === 'active';
    const isActiveAdmin = after.role === 'admin' && after.status === 'active';
    if (wasActiveAdmin && !isActiveAdmin && activeAdmins.filter((a) => a !== id).length === 0) {
      throw new ApiError('last_admin', {
        detail: 'This is the last active admin: promote another admin first',
      });
    }
    if (Object.keys(patch).length > 0) {
      const now = Date.now();
      after.updated_at = now;
      await writeUser(trx, id, { ...patch, updated_at: now });
    }
    let disabledRevoked = 0;
    let passwordRevoked = 0;
    if (patch.status === 'disabled' && before.status !== 'disabled') {
      disabledRevoked = await revokeUserSessions(trx, id, 'account_disabled');
    } else if (patch.password_hash !== undefined) {
      passwordRevoked = await revokeUserSessions(trx, id, 'password_set_by_admin');
    }
    // docs/api.md §16: a disable, a password set or an address change by an admin ends every
    // outstanding link and mfa_token of the user (a re-enabled account gets none of them back; a
    // pending address-change link must not move the account again after the admin chose its address).
    const addressChanged = patch.email !== undefined && patch.email !== before.email;
    if (
      (patch.status === 'disabled' && before.status !== 'disabled') ||
      patch.password_hash !== undefined ||
      addressChanged
    ) {
      await endOutstandingLinks(trx, id);
    }
    // One entry per action, each its own insert, all in this transaction (docs/operations.md).
    const entry = (action: AuditEvent['action'], details: Record<string, unknown>) =>
      recordAudit(trx, { action, actor: by.actor, target: { type: 'user', id }, client: by.client, details });
    // email_verified is listed when an admin set it; its reset by an address change is implied.
    const fields = (['name', 'email', 'email_verified'] as const).filter(
      (f) =>
        patch[f] !== undefined &&
        patch[f] !== before[f] &&
        (f !== 'email_verified' || body.email_verified !== undefined),
    );
    if (fields.length > 0) await entry('user.update', { fields });
    if (patch.role !== undefined && patch.role !== before.role) {
      await entry('user.role_change', { from: before.role, to: patch.role });
    }
    if (patch.status !== undefined && patch.status !== before.status) {
      await entry('user.status_change', {
        from: before.status,
        to: patch.status,
        sessions_revoked: disabledRevoked,
      });
    }
    if (patch.password_hash !== undefined) {
      await entry('password.change', { by_admin: true, sessions_revoked: passwordRevoked });
    }
    return after;
  });
  return toPublicUser(updated);
}

/** POST /api/v1/users (user_admin): an active account, with or without a password. */
export async function createUser(ctx: AppContext, body: CreateBody, by: ChangedBy): Promise<PublicUser> {
  const email = emailOr400(body.email);
  let passwordHash: string | null = null;
  if (body.password !== undefined) {
    checkPassword(ctx, body.password, email);
    passwordHash = await ctx.passwords.hash(body.password);
  }
  const now = Date.now();
  const row = newUserRow(
    {
      created_via: 'admin',
      email,
      name: body.name?.trim() ?? '',
      role: body.role ?? 'user',
      password_hash: passwordHash,
      locale: body.locale === undefined ? null : localeOr400(body.locale),
    },
    now,
  );
  await ctx.db.transaction().execute(async (trx) => {
    try {
      await insertUser(trx, row);
    } catch (err) {
      throw isUniqueViolation(err) ? emailTaken() : err;
    }
    await recordAudit(trx, {
      action: 'user.create',
      actor: by.actor,
      target: { type: 'user', id: row.id },
      client: by.client,
      details: { role: row.role, via: 'api' },
    });
  });
  return toPublicUser(row);
}

/** DELETE /api/v1/users/<id> (user_admin): the user and, by cascade, sessions, identities, invitations. */
export async function deleteUser(
  ctx: AppContext,
  caller: UserRow,
  rawId: string,
  by: ChangedBy,
): Promise<void> {
  const id = idOr404(rawId);
  if (id === caller.id) {
    throw new ApiError('forbidden', { detail: 'You cannot delete your own account' });
  }
  await ctx.db.transaction().execute(async (trx) => {
    const activeAdmins = await lockActiveAdminIds(trx, ctx.database.dialect);
    const target = await lockUserById(trx, id, ctx.database.dialect);
    if (!target) throw notFound();
    if (activeAdmins.includes(id) && activeAdmins.length <= 1) {
      throw new ApiError('last_admin', { detail: 'This is the last active admin' });
    }
    // Foreign keys cascade to sessions (and their refresh tokens), identities and invitations;
    // invitations this user sent keep existing with invited_by cleared.
    await deleteUserById(trx, id);
    // docs/api.md §22: the owner's keys are revoked with it, each with its api_key.revoked event.
    await revokeOwnerKeys(trx, { type: 'user', id }, by);
    // The e-mail names the account once the id names nobody.
    await recordAudit(trx, {
      action: 'user.delete',
      actor: by.actor,
      target: { type: 'user', id },
      client: by.client,
      details: { email: target.email, role: target.role },
      subject: target,
    });
  });
}

async function writeUser(db: Db, id: string, patch: UserUpdate): Promise<void> {
  try {
    await updateUserRow(db, id, patch);
  } catch (err) {
    throw isUniqueViolation(err) ? emailTaken() : err;
  }
}

function assertSelfOrAdmin(caller: UserRow, id: string): void {
  if (caller.role !== 'admin' && caller.id !== id) {
    throw new ApiError('forbidden', { detail: 'You may only access your own account' });
  }
}

function idOr404(raw: string): string {
  const id = parseUserId(raw);
  if (id === null) throw notFound();
  return id;
}

function notFound(): ApiError {
  return new ApiError('not_found', { detail: 'No such user' });
}

function emailTaken(): ApiError {
  return new ApiError('email_taken', { detail: 'Another account uses this email' });
}

function emailOr400(raw: string): string {
  const email = normalizeEmail(raw);
  if (email === null) {
    throw new ApiError('validation_failed', {
      detail: 'body/email is not a valid email address',
      errors: [{ path: '/email', message: 'is not a valid email address' }],
    });
  }
  return email;
}

function checkPassword(ctx: AppContext, password: string, email: string): void {
  const verdict = checkPasswordPolicy(password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email,
  });
  if (!verdict.ok) throw new ApiError('weak_password', { detail: verdict.reason });
}
