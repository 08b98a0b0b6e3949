import type { AuthContext } from '../../http/guard.ts';
import {
  confirmTotp,
  countPasskeys,
  countRecoveryCodes,
  deleteRecoveryCodes,
  deleteTotp,
  deleteUserPasskeys,
  findTotp,
  upsertPendingTotp,
} from '../../identity/factors/second-factors.queries.ts';
import {
  matchingStep,
  newTotpSecret,
  otpauthUrl,
  qrSvg,
  totpSecretText,
} from '../../identity/factors/totp.ts';
import {
  type AuditEvent,
  type ClientInfo,
  confirmCurrentPassword,
  type FreshProof,
  findUserByEmail,
  findUserById,
  recordAudit,
  recoveryCodesForNewFactor,
  refuseServiceAccount,
  regenerateRecoveryCodes,
  requireFreshProof,
  requireSecretsKey,
  revokeUserSessions,
  secondFactors,
  totpContext,
  withLoginAttempt,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { queueSecurityNotice } from './security-notices.ts';

/** A pending enrolment lives 10 minutes (docs/api.md §13). */
const PENDING_TTL_MS = 10 * 60_000;

const codeInvalid = (detail = 'The code is not correct, or was already used') =>
  new ApiError('mfa_code_invalid', { detail });

/** GET /mfa: what the caller has. */
export async function mfaStatus(ctx: AppContext, user: UserRow) {
  const totp = await findTotp(ctx.db, user.id);
  const confirmed = totp !== undefined && totp.confirmed_at !== null;
  return {
    totp: {
      enabled: confirmed,
      created_at: confirmed ? new Date(totp.confirmed_at as number).toISOString() : null,
    },
    recovery_codes_remaining: await countRecoveryCodes(ctx.db, user.id),
    passkeys: await countPasskeys(ctx.db, user.id),
  };
}

/** POST /mfa/totp: a pending secret (replacing a pending one) after the current password. */
export async function enrollTotp(
  ctx: AppContext,
  auth: AuthContext,
  currentPassword: string,
  client: ClientInfo,
) {
  const { user } = auth;
  const key = requireSecretsKey(ctx);
  const existing = await findTotp(ctx.db, user.id);
  if (existing?.confirmed_at != null) {
    throw new ApiError('mfa_already_enabled', {
      detail: 'TOTP is already enabled; remove it first to enrol again',
    });
  }
  await confirmCurrentPassword(ctx, user, currentPassword, client, 'totp_enroll');
  const secret = newTotpSecret();
  const now = Date.now();
  const stored = await ctx.db.transaction().execute(async (trx) => {
    const ok = await upsertPendingTotp(trx, {
      user_id: user.id,
      secret_box: key.seal(secret, totpContext(user.id)),
      created_at: now,
      confirmed_at: null,
      pending_expires_at: now + PENDING_TTL_MS,
      last_step: -1,
    });
    if (ok) {
      await recordAudit(trx, {
        action: 'mfa.totp_enroll',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        client,
        details: { expires_at: now + PENDING_TTL_MS },
      });
    }
    return ok;
  });
  if (!stored) throw new ApiError('mfa_already_enabled', { detail: 'TOTP is already enabled' });
  const url = otpauthUrl(ctx.config.appName, user.email, secret);
  return { secret: totpSecretText(secret), otpauth_url: url, qr_svg: await qrSvg(url) };
}

/**
 * POST /mfa/totp/confirm: the first good code turns the pending secret on (its step counts as
 * used), issues recovery codes when the user holds none, and signs out every other session.
 */
export async function confirmTotpEnrollment(
  ctx: AppContext,
  auth: AuthContext,
  code: string,
  client: ClientInfo,
) {
  const { user } = auth;
  const key = requireSecretsKey(ctx);
  // One attempt of the account's login throttle (docs/api.md §13), the sign-in pipeline's: a wrong
  // code keeps it (401, the counted failure, no entry: the enrolment is the caller's own), a good one
  // or a refusal that was no guess gives it back.
  const { codes } = await withLoginAttempt(
    ctx,
    { way: { method: 'mfa_code' }, client, account: user.email },
    async (attempt) => {
      const pending = await findTotp(ctx.db, user.id);
      if (!pending || pending.confirmed_at !== null || (pending.pending_expires_at ?? 0) <= Date.now()) {
        if (pending?.confirmed_at != null)
          throw new ApiError('mfa_already_enabled', { detail: 'TOTP is already enabled' });
        throw codeInvalid('There is no pending TOTP enrolment (it may have expired); start again');
      }
      const secret = key.open(pending.secret_box, totpContext(user.id));
      const step = secret === null ? null : matchingStep(secret, code.trim());
      const wrongCode = () => {
        attempt.keep();
        return codeInvalid();
      };
      if (step === null) throw wrongCode();
      const made = await ctx.db.transaction().execute(async (trx) => {
        if (!(await confirmTotp(trx, user.id, step, Date.now()))) return null;
        const issued = await recoveryCodesForNewFactor(ctx, trx, user.id);
        const revoked = await revokeUserSessions(trx, user.id, 'mfa_enabled', auth.session.id);
        await recordAudit(trx, {
          action: 'mfa.totp_enable',
          actor: { type: 'user', id: user.id },
          target: { type: 'user', id: user.id },
          client,
          details: { recovery_codes_issued: issued !== undefined, sessions_revoked: revoked },
        });
        await queueSecurityNotice(ctx, trx, user, 'totp_enabled', { request: client.language });
        return { issued };
      });
      if (made === null) throw wrongCode();
      return { kind: 'confirmed' as const, codes: made };
    },
  );
  ctx.mail.outbox.nudge();
  return codes.issued === undefined ? {} : { recovery_codes: codes.issued };
}

/**
 * DELETE /mfa/totp: removes TOTP after a fresh proof (docs/api.md §16: the current password, a TOTP
 * or recovery code, or a passkey), and the recovery codes when no factor is left.
 */
export async function removeTotp(
  ctx: AppContext,
  auth: AuthContext,
  proof: FreshProof | null | undefined,
  client: ClientInfo,
): Promise<void> {
  const { user } = auth;
  const totpEnabled = async () => {
    const totp = await findTotp(ctx.db, user.id);
    if (!totp || totp.confirmed_at === null)
      throw new ApiError('not_found', { detail: 'TOTP is not enabled' });
  };
  const removed = await requireFreshProof(
    ctx,
    user,
    proof,
    client,
    'totp_disable',
    async (trx, kind) => {
      if (!(await deleteTotp(trx, user.id))) return false;
      // Recovery codes back up factors: they go with the last one, and stay while passkeys remain.
      const passkeysLeft = await countPasskeys(trx, user.id);
      if (passkeysLeft === 0) await deleteRecoveryCodes(trx, user.id);
      await recordAudit(trx, {
        action: 'mfa.totp_disable',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        client,
        details: { recovery_codes_removed: passkeysLeft === 0, proof: kind },
      });
      await queueSecurityNotice(ctx, trx, user, 'totp_disabled', { request: client.language });
      return true;
    },
    totpEnabled,
  );
  if (!removed) throw new ApiError('not_found', { detail: 'TOTP is not enabled' });
  ctx.mail.outbox.nudge();
}

/** POST /mfa/recovery-codes: a new set after a fresh proof (docs/api.md §16); the old set dies. */
export async function newRecoveryCodeSet(
  ctx: AppContext,
  auth: AuthContext,
  proof: FreshProof | null | undefined,
  client: ClientInfo,
) {
  const { user } = auth;
  const hasFactor = async () => {
    if ((await secondFactors(ctx, ctx.db, user.id)).length === 0) {
      throw new ApiError('not_found', {
        detail: 'Recovery codes back up a second factor, and there is none',
      });
    }
  };
  const codes = await requireFreshProof(
    ctx,
    user,
    proof,
    client,
    'recovery_codes_regenerate',
    async (trx, kind) => {
      const issued = await regenerateRecoveryCodes(ctx, trx, user.id);
      await recordAudit(trx, {
        action: 'mfa.recovery_codes_regenerate',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        client,
        details: { proof: kind },
      });
      await queueSecurityNotice(ctx, trx, user, 'recovery_codes_regenerated', { request: client.language });
      return issued;
    },
    hasFactor,
  );
  ctx.mail.outbox.nudge();
  return { recovery_codes: codes };
}

/** DELETE /users/<id>/mfa (admin): every second factor of the user goes, and every session. */
export async function resetUserMfa(ctx: AppContext, admin: AuthContext, userId: string, client: ClientInfo) {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw new ApiError('not_found', { detail: 'No such user' });
  refuseServiceAccount(user, 'second factors');
  await resetFactors(ctx, user, { type: 'user', id: admin.user.id }, client);
}

/**
 * `gatehouse users mfa-reset --email E`: the admin's reset, by an operator on the server. It works
 * whichever modules are on (DELETE /users/<id>/mfa is served only while `mfa` is), so it is the way
 * out for an account locked by docs/api.md §16 while `mfa` is off. Undefined: no such account.
 */
export async function resetUserMfaByEmail(
  ctx: AppContext,
  email: string,
): Promise<{ totpRemoved: boolean; passkeysRemoved: number } | undefined> {
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return undefined;
  return resetFactors(ctx, user, { type: 'system' }, { ip: null, userAgent: null });
}

/** Removes every factor of the user and revokes its sessions, audited, with the security notice. */
async function resetFactors(
  ctx: AppContext,
  user: UserRow,
  actor: AuditEvent['actor'],
  client: ClientInfo,
): Promise<{ totpRemoved: boolean; passkeysRemoved: number }> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const hadTotp = await deleteTotp(trx, user.id);
    const passkeys = await deleteUserPasskeys(trx, user.id);
    await deleteRecoveryCodes(trx, user.id);
    const revoked = await revokeUserSessions(trx, user.id, 'mfa_reset');
    // docs/api.md §16: a link or mfa_token issued before the reset must not outlive it.
    await endOutstandingLinks(trx, user.id);
    await recordAudit(trx, {
      action: 'mfa.reset',
      actor,
      target: { type: 'user', id: user.id },
      client,
      details: { totp_removed: hadTotp, passkeys_removed: passkeys, sessions_revoked: revoked },
    });
    await queueSecurityNotice(ctx, trx, user, 'mfa_reset', { request: client.language });
    return { totpRemoved: hadTotp, passkeysRemoved: passkeys };
  });
  ctx.mail.outbox.nudge();
  return result;
}
