import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { listPasskeys } from '../../identity/factors/passkeys.queries.ts';
import { type ClientInfo, liveMfaTokenUser, storeChallenge } from '../../identity/index.ts';
import { peekLinkReserved } from '../../identity/links/one-time-links.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';

/**
 * POST /passkeys/authentication/options: for discoverable sign-in (no body fields), or as a second
 * factor (its credentials allowed, user verification preferred) for the user an `mfa_token` names
 * (challenge purpose `mfa`) or a live password reset link names (`reset_token`, purpose `reset`:
 * docs/api.md §11). With no body fields and a Bearer caller (`callerId`), a fresh proof of that caller
 * (purpose `reauth`, docs/api.md §16). A challenge serves only its purpose and its user.
 */
export async function authenticationOptions(
  ctx: AppContext,
  input: { mfa_token?: string | undefined; reset_token?: string | undefined },
  client: ClientInfo,
  callerId: string | null = null,
) {
  const { rpId } = ctx.config.webauthn;
  if (input.mfa_token !== undefined && input.reset_token !== undefined) {
    throw new ApiError('validation_failed', {
      detail: 'body/reset_token must not be sent together with mfa_token',
      errors: [{ path: '/reset_token', message: 'must not be sent together with mfa_token' }],
    });
  }
  if (input.mfa_token === undefined && input.reset_token === undefined && callerId !== null) {
    return proofOptions(ctx, callerId, 'reauth');
  }
  if (input.mfa_token === undefined && input.reset_token === undefined) {
    const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: 'required' });
    return { challenge_id: await storeChallenge(ctx, options.challenge, 'login', null), options };
  }
  const [userId, purpose] =
    input.reset_token !== undefined
      ? [await resetLinkUser(ctx, input.reset_token, client), 'reset' as const]
      : [await liveMfaTokenUser(ctx.db, input.mfa_token as string), 'mfa' as const];
  return proofOptions(ctx, userId, purpose);
}

/** Options for a passkey proving one known user: its credentials allowed, user verification preferred. */
async function proofOptions(ctx: AppContext, userId: string, purpose: 'mfa' | 'reset' | 'reauth') {
  const passkeys = await listPasskeys(ctx.db, userId);
  const options = await generateAuthenticationOptions({
    rpID: ctx.config.webauthn.rpId,
    userVerification: 'preferred',
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
  });
  return { challenge_id: await storeChallenge(ctx, options.challenge, purpose, userId), options };
}

/**
 * The user of a live password reset link, or 410 `link_invalid` (unknown, used, replaced, expired:
 * one answer), behind the same per-client budget of dead link attempts as opening the link. With
 * `recovery` off its links serve nothing: 404 `module_disabled`, as the reset itself answers.
 */
async function resetLinkUser(ctx: AppContext, resetToken: string, client: ClientInfo): Promise<string> {
  if (!ctx.modules.isEnabled('recovery')) {
    throw new ApiError('module_disabled', { detail: 'Password recovery is switched off (module recovery)' });
  }
  const { user } = await peekLinkReserved(ctx.db, resetToken, ['password_reset'], client.ip);
  return user.id;
}
