import type { Static } from '@sinclair/typebox';
import type { AuthContext } from '../../http/guard.ts';
import {
  type ClientInfo,
  isMultiFactor,
  iso,
  listIdentities,
  PASSWORD_LOGIN,
  revokeUserSessions,
  secondFactorRequired,
  setPasswordHash,
  signIn,
  type TokenResponse,
  toPublicUser,
  withLoginAttempt,
} from '../../identity/index.ts';
import { endOutstandingLinks } from '../../identity/links/credential-events.ts';
import { checkPasswordPolicy } from '../../identity/passwords/password-policy.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { invalidCredentials } from '../auth/index.ts';
import { mfaStatus } from '../mfa/index.ts';
import { liveSessions } from '../sessions/index.ts';
import type { ProfileResponse } from './account.schemas.ts';

/**
 * PUT /change-password (docs/api.md §5). The policy is checked first (no hashing for a password that
 * would be refused anyway); the current password is then checked under the same throttle as login (reserved first),
 * so a stolen access token cannot be used to guess it at hashing speed. Every existing session of
 * the user ends — the caller's too — and the answer is a fresh session.
 */
export async function changePassword(
  ctx: AppContext,
  auth: AuthContext,
  input: { current_password: string; new_password: string },
  client: ClientInfo,
): Promise<TokenResponse> {
  const { user } = auth;
  const policy = checkPasswordPolicy(input.new_password, {
    minLength: ctx.config.passwordMinLength,
    breachedCheck: ctx.config.passwordBreachedCheck,
    email: user.email,
  });
  if (!policy.ok) throw new ApiError('weak_password', { detail: policy.reason });

  // The sign-in pipeline's attempt, reserved before hashing like login's: a wrong current password
  // keeps it as its failure (no entry: the caller is signed in and nothing changed); an outage
  // (hashing at capacity) gives it back; the change settles it as a success in its transaction.
  const changed = await withLoginAttempt(
    ctx,
    { way: { method: 'password_change' }, client, account: user.email },
    async (attempt) => {
      const verified =
        user.password_hash === null
          ? await ctx.passwords.verifyDummy(input.current_password)
          : await ctx.passwords.verify(user.password_hash, input.current_password);
      if (!verified) {
        attempt.keep();
        throw invalidCredentials();
      }
      const hash = await ctx.passwords.hash(input.new_password);
      const now = Date.now();
      const tokens = await ctx.db.transaction().execute(async (trx) => {
        await setPasswordHash(trx, user.id, hash, now);
        const revoked = await revokeUserSessions(trx, user.id, 'password_changed');
        // docs/api.md §16: a link or mfa_token issued before the change must not outlive it.
        await endOutstandingLinks(trx, user.id, now);
        // The new session is covered by the change's own entry, and a password change is no login.
        const updated = { ...user, password_hash: hash, updated_at: now };
        // REQUIRE_MFA (docs/mfa.md): the caller's session passed its second factor, and the new one
        // continues it with the password proven again; it keeps the session's methods rather than
        // fall to an enrolment-only `["pwd"]`. Elsewhere a password change opens `["pwd"]`, as always.
        const carried =
          secondFactorRequired(ctx.config.requireMfa, user.role) && isMultiFactor(auth.claims.amr);
        const opened = await signIn(ctx, trx, {
          user: updated,
          client,
          amr: carried ? [...(auth.claims.amr ?? [])] : PASSWORD_LOGIN.amr,
          details: { method: 'password_change' },
          // Settles the attempt as a success in this transaction (the account's failures clear).
          attempt,
          opening: { passwordChange: { sessionsRevoked: revoked } },
        });
        return opened.tokens;
      });
      // Not `signed_in`: a password change is no login, so gatehouse_logins_total does not count it.
      return { kind: 'password_changed' as const, tokens };
    },
  );
  return changed.tokens;
}

/** GET /profile: the caller's user object with linked identities and live sessions. */
export async function profile(ctx: AppContext, auth: AuthContext): Promise<Static<typeof ProfileResponse>> {
  const [identities, sessions] = await Promise.all([
    linkedIdentities(ctx, auth.user.id),
    liveSessions(ctx, auth.user.id),
  ]);
  return {
    ...toPublicUser(auth.user),
    identities,
    sessions: sessions.map((s) => ({
      id: s.id,
      created_at: iso(s.created_at),
      last_used_at: iso(s.last_used_at),
      // A key's caller has no session of its own (docs/api.md §22).
      current: auth.apiKey === null && s.id === auth.session.id,
    })),
    ...(ctx.modules.isEnabled('mfa') && { mfa: await mfaStatus(ctx, auth.user) }),
  };
}

/** The external identities linked to a user, as the profile and the console show them. */
export async function linkedIdentities(ctx: AppContext, userId: string) {
  const rows = await listIdentities(ctx.db, userId);
  return rows.map((i) => ({ issuer: i.issuer, subject: i.subject, linked_at: iso(i.linked_at) }));
}
