import { randomBytes } from 'node:crypto';
import {
  auditEntriesOfTarget,
  deleteUserById,
  findUserByEmail,
  hasUser,
  insertUser,
  lockUserById,
  newUserRow,
  normalizeEmail,
  recordAudit,
  revokeUserSessions,
  updateUser,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ConfigError } from '../../platform/config.ts';
import { deleteGeneratedPassword, insertGeneratedPassword } from './generated-password.queries.ts';

export const DEFAULT_ADMIN_EMAIL = 'admin@example.com';

/**
 * Creates the first admin when none exists (docs/api.md §10): from ADMIN_EMAIL/ADMIN_PASSWORD, or on an
 * empty database `admin@example.com` with a random password printed once to the log.
 */
export async function ensureFirstAdmin(ctx: AppContext): Promise<void> {
  try {
    await createFirstAdmin(ctx);
  } catch (err) {
    // Instances started together on an empty database race here; the losers' inserts fail on the
    // unique email. That is not a failed start when the winner's admin is now there.
    if (!(await hasUser(ctx.db, 'admin'))) throw err;
    ctx.log.info('first admin created by another instance');
  }
}

async function createFirstAdmin(ctx: AppContext): Promise<void> {
  const { db, config, log } = ctx;
  if (await hasUser(db, 'admin')) return;

  if (config.adminEmail !== null && config.adminPassword !== null) {
    // Checked here, where it is used: an admin with a weak password is a bad deployment, not a
    // warning (docs/api.md §10: bad configuration stops the start with one line).
    const policy = checkPasswordPolicy(config.adminPassword, {
      minLength: config.passwordMinLength,
      breachedCheck: config.passwordBreachedCheck,
      email: config.adminEmail,
    });
    if (!policy.ok) throw new ConfigError(`ADMIN_PASSWORD is refused: ${policy.reason}`);
    await createOrPromoteAdmin(ctx, config.adminEmail, config.adminPassword, 'bootstrap');
    log.info({ email: normalizeEmail(config.adminEmail) }, 'first admin created from ADMIN_EMAIL');
    return;
  }
  if (await hasUser(db)) {
    log.warn('no admin exists and ADMIN_EMAIL is not set: run `gatehouse create-admin`');
    return;
  }
  const password = randomBytes(18).toString('base64url');
  await createOrPromoteAdmin(ctx, DEFAULT_ADMIN_EMAIL, password, 'bootstrap', { generated: true });
  // Printed once, deliberately outside pino's redaction: this line is the only place it ever appears.
  log.warn(
    { email: DEFAULT_ADMIN_EMAIL, generated_password: password },
    'created the first admin with a random password; it works once: the first sign-in sets a new one',
  );
}

/**
 * Creates an active admin, or promotes and re-passwords an existing user with that email (ending
 * all of that user's sessions). The change and its audit entries (system actor; `via` says which
 * path) commit together.
 */
export async function createOrPromoteAdmin(
  ctx: AppContext,
  rawEmail: string,
  password: string,
  via: 'bootstrap' | 'cli.create_admin' | 'bench',
  /** A password the service generated: it serves once (docs/auth.md, "First admin"). */
  options: { generated?: boolean } = {},
): Promise<string> {
  const email = normalizeEmail(rawEmail);
  if (email === null) throw new Error('the admin email is not a valid address');
  // Hashed before the transaction, which must never wait on argon2 (SQLite: the only connection).
  const hash = await ctx.passwords.hash(password);
  const now = Date.now();
  return ctx.db.transaction().execute(async (trx) => {
    const entry = (
      action: 'user.create' | 'user.role_change' | 'user.status_change' | 'password.change',
      id: string,
      details: Record<string, unknown>,
    ) =>
      recordAudit(trx, {
        action,
        actor: { type: 'system' },
        target: { type: 'user', id },
        details: { ...details, via },
      });
    const found = await findUserByEmail(trx, email);
    // Locked and read again (PostgreSQL: the row as the instance that got there first left it).
    const existing = found && (await lockUserById(trx, found.id, ctx.database.dialect));
    if (via === 'bootstrap' && (existing?.role === 'admin' || (await hasUser(trx, 'admin')))) {
      // Instances started together on an empty database: the first admin is the one the first
      // instance made. Re-passwording it here would print a second password and leave the
      // first printed one dead (ensureFirstAdmin treats this as "created by another instance").
      throw new FirstAdminExists();
    }
    if (existing) {
      await updateUser(trx, existing.id, {
        role: 'admin',
        status: 'active',
        password_hash: hash,
        // The operator vouches for the address (docs/api.md §12).
        email_verified: 1,
        updated_at: now,
      });
      if (existing.role !== 'admin')
        await entry('user.role_change', existing.id, { from: existing.role, to: 'admin' });
      if (existing.status !== 'active') {
        await entry('user.status_change', existing.id, {
          from: existing.status,
          to: 'active',
          sessions_revoked: 0,
        });
      }
      // A password set by the operator ends every session, as every other way of setting one does
      // (a password change ends the sessions it did not open): whoever held a session under the old
      // password loses it.
      const revoked = await revokeUserSessions(trx, existing.id, 'password_set_by_operator');
      // The operator's password is theirs: a generated one's single use ends with it.
      await deleteGeneratedPassword(trx, existing.id);
      // docs/api.md §16: and every outstanding link and mfa_token, as an admin's password set does.
      await endOutstandingLinks(trx, existing.id, now);
      // Why the system set a password (docs/operations.md, the audit actions): this account was made
      // the admin with the operator's password.
      await entry('password.change', existing.id, {
        sessions_revoked: revoked,
        reason: via === 'bootstrap' ? 'first_admin' : 'admin_set_by_operator',
      });
      return existing.id;
    }
    const row = newUserRow(
      {
        created_via: 'first_admin',
        email,
        name: 'Administrator',
        role: 'admin',
        password_hash: hash,
        email_verified: 1,
      },
      now,
    );
    await insertUser(trx, row);
    if (options.generated)
      await insertGeneratedPassword(trx, { user_id: row.id, password_hash: hash, created_at: now });
    await entry('user.create', row.id, {
      role: 'admin',
      ...(options.generated && { generated_password: true }),
    });
    return row.id;
  });
}

/** Another instance made the first admin while this one was about to. */
class FirstAdminExists extends Error {
  override name = 'FirstAdminExists';
}

/**
 * `create-admin` made another admin: the first admin that the service created at start
 * (`admin@example.com`, docs/api.md §10) is removed when nobody ever used it: it never signed in,
 * and its audit trail holds nothing but its creation at start (and failed sign-ins). A generated
 * password printed once in a log should not stay a way in. Returns whether it was removed.
 */
export async function removeUnusedFirstAdmin(ctx: AppContext, keptEmail: string): Promise<boolean> {
  if (normalizeEmail(keptEmail) === DEFAULT_ADMIN_EMAIL) return false;
  return ctx.db.transaction().execute(async (trx) => {
    const first = await findUserByEmail(trx, DEFAULT_ADMIN_EMAIL);
    if (first?.role !== 'admin' || first.last_login_at !== null) return false;
    const history = await auditEntriesOfTarget(trx, 'user', first.id);
    const createdAtStart = history.some(
      (e) => e.action === 'user.create' && detailsVia(e.details) === 'bootstrap',
    );
    const untouched = history.every((e) => e.action === 'user.create' || e.action === 'login.failure');
    if (!createdAtStart || !untouched) return false;
    // Foreign keys cascade to whatever hangs on the account (it has no sessions: it never signed in).
    await deleteUserById(trx, first.id);
    await recordAudit(trx, {
      action: 'user.delete',
      actor: { type: 'system' },
      target: { type: 'user', id: first.id },
      details: {
        email: first.email,
        role: first.role,
        via: 'cli.create_admin',
        reason: 'first_admin_never_used',
      },
      subject: first,
    });
    return true;
  });
}

function detailsVia(details: string): unknown {
  try {
    return (JSON.parse(details) as { via?: unknown }).via;
  } catch {
    return undefined;
  }
}
