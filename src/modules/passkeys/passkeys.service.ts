import {
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { v7 as uuidv7 } from 'uuid';
import type { AuthContext } from '../../http/guard.ts';
import {
  consumeChallenge,
  deletePasskey,
  findPasskeyByCredential,
  insertPasskey,
  listPasskeys,
} from '../../identity/factors/passkeys.queries.ts';
import {
  type ClientInfo,
  confirmCurrentPassword,
  dropRecoveryCodesWithoutFactors,
  endSessionsForFirstFactor,
  type FreshProof,
  findUserById,
  holdsSecondFactor,
  type PasskeyProof,
  recordAudit,
  recoveryCodesForNewFactor,
  refuseSignIn,
  requireFreshProof,
  type SignInWay,
  signIn,
  storeChallenge,
  type TokenResponse,
  verifyAssertion,
  withLoginAttempt,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import type { PasskeysTable } from '../../platform/db/schema.ts';
import { singleLine } from '../../platform/mail/templates.ts';
import { queueSecurityNotice } from '../mfa/index.ts';

/** A passkey as the API shows it (never key material). */
export function toPublicPasskey(p: PasskeysTable) {
  return {
    id: p.id,
    name: p.name,
    created_at: new Date(Number(p.created_at)).toISOString(),
    last_used_at: p.last_used_at === null ? null : new Date(Number(p.last_used_at)).toISOString(),
    backed_up: p.backed_up === 1,
    device_type: p.device_type,
  };
}

const registrationInvalid = (detail = 'The passkey registration could not be verified') =>
  new ApiError('passkey_invalid', { status: 400, detail });
const signInInvalid = () => new ApiError('passkey_invalid', { detail: 'The passkey could not be verified' });

/** POST /passkeys/registration/options: creation options after the current password. */
export async function registrationOptions(
  ctx: AppContext,
  auth: AuthContext,
  password: string,
  client: ClientInfo,
) {
  const { user } = auth;
  await confirmCurrentPassword(ctx, user, password, client, 'passkey_registration');
  const existing = await listPasskeys(ctx.db, user.id);
  const options = await generateRegistrationOptions({
    rpName: ctx.config.webauthn.rpName,
    rpID: ctx.config.webauthn.rpId,
    userName: user.email,
    userDisplayName: user.name || user.email,
    userID: new Uint8Array(Buffer.from(user.id)),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) })),
    authenticatorSelection: {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    },
  });
  const challengeId = await storeChallenge(ctx, options.challenge, 'register', user.id);
  return { challenge_id: challengeId, options };
}

/** POST /passkeys: verifies the attestation and stores the passkey (and the first recovery codes). */
export async function createPasskey(
  ctx: AppContext,
  auth: AuthContext,
  input: { challenge_id: string; response: Record<string, unknown>; name?: string | undefined },
  client: ClientInfo,
) {
  const { user } = auth;
  const challenge = await consumeChallenge(ctx.db, input.challenge_id, 'register', Date.now());
  if (!challenge || challenge.user_id !== user.id) {
    throw registrationInvalid('The registration challenge is unknown, used or expired');
  }
  const { rpId, origins } = ctx.config.webauthn;
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: input.response as unknown as RegistrationResponseJSON,
      expectedChallenge: challenge.challenge,
      expectedOrigin: [...origins],
      expectedRPID: rpId,
      requireUserVerification: true,
    });
  } catch (err) {
    ctx.log.info({ reason: err instanceof Error ? err.message : 'unknown' }, 'passkey registration refused');
    throw registrationInvalid();
  }
  if (!verified.verified) throw registrationInvalid();
  const info = verified.registrationInfo;
  if (await findPasskeyByCredential(ctx.db, info.credential.id)) {
    throw registrationInvalid('This passkey is already registered');
  }
  const now = Date.now();
  const row: PasskeysTable = {
    id: uuidv7(),
    user_id: user.id,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: JSON.stringify(info.credential.transports ?? []),
    backed_up: info.credentialBackedUp ? 1 : 0,
    device_type: info.credentialDeviceType,
    name: singleLine(input.name ?? '', 64) || 'Passkey',
    created_at: now,
    last_used_at: null,
  };
  // The lookup above answers the common case; two registrations of one credential at once both
  // pass it, and the unique index on credential_id decides: the loser gets the same 400, not a 500.
  const codes = await ctx.db.transaction().execute(async (trx) => {
    const hadFactor = await holdsSecondFactor(trx, user.id);
    await insertPasskey(trx, row).catch((err: unknown) => {
      throw isUniqueViolation(err) ? registrationInvalid('This passkey is already registered') : err;
    });
    const issued = await recoveryCodesForNewFactor(ctx, trx, user.id);
    // The account's first factor ends the sessions opened with the password alone (docs/mfa.md).
    const revoked = await endSessionsForFirstFactor(trx, user.id, hadFactor, auth.session.id);
    await recordAudit(trx, {
      action: 'passkey.add',
      actor: { type: 'user', id: user.id },
      target: { type: 'passkey', id: row.id },
      client,
      details: {
        name: row.name,
        backed_up: info.credentialBackedUp,
        recovery_codes_issued: issued !== undefined,
        sessions_revoked: revoked,
      },
    });
    await queueSecurityNotice(ctx, trx, user, 'passkey_added', {
      request: client.language,
      passkey: row.name,
    });
    return issued;
  });
  ctx.mail.outbox.nudge();
  return { ...toPublicPasskey(row), ...(codes !== undefined && { recovery_codes: codes }) };
}

/**
 * DELETE /passkeys/<id>: own passkeys only (another's: 404), after a fresh proof (docs/api.md §16);
 * recovery codes go with the last factor. The proof may be this very passkey.
 */
export async function removePasskey(
  ctx: AppContext,
  auth: AuthContext,
  id: string,
  proof: FreshProof | null | undefined,
  client: ClientInfo,
) {
  const { user } = auth;
  const exists = async () => {
    if (!(await listPasskeys(ctx.db, user.id)).some((p) => p.id === id)) {
      throw new ApiError('not_found', { detail: 'No such passkey' });
    }
  };
  const removed = await requireFreshProof(
    ctx,
    user,
    proof,
    client,
    'passkey_remove',
    async (trx, kind) => {
      if (!(await deletePasskey(trx, user.id, id))) return false;
      const left = (await listPasskeys(trx, user.id)).length;
      const lastFactor = await dropRecoveryCodesWithoutFactors(trx, user.id, left);
      await recordAudit(trx, {
        action: 'passkey.remove',
        actor: { type: 'user', id: user.id },
        target: { type: 'passkey', id },
        client,
        details: { recovery_codes_removed: lastFactor, proof: kind },
      });
      await queueSecurityNotice(ctx, trx, user, 'passkey_removed', { request: client.language });
      return true;
    },
    exists,
  );
  if (!removed) throw new ApiError('not_found', { detail: 'No such passkey' });
  ctx.mail.outbox.nudge();
}

/** GET /passkeys. */
export async function passkeyList(ctx: AppContext, userId: string) {
  return { data: (await listPasskeys(ctx.db, userId)).map(toPublicPasskey) };
}

/** The passkey sign-in as a way in. */
const PASSKEY_WAY: SignInWay = { method: 'passkey' };

/** POST /login/passkey: a user-verifying passkey is a complete sign-in (amr `[hwk|swk, user]`). */
export async function loginWithPasskey(
  ctx: AppContext,
  proof: PasskeyProof,
  client: ClientInfo,
): Promise<TokenResponse> {
  const outcome = await withLoginAttempt(ctx, { way: PASSKEY_WAY, client }, async (attempt) => {
    const verified = await verifyAssertion(ctx, proof, 'login', true);
    const user = verified ? await findUserById(ctx.db, verified.passkey.user_id) : undefined;
    // Every refusal is audited as a failed passkey sign-in and counted (a passkey spends no login budget).
    const refuse = (reason: string, error: ApiError) =>
      refuseSignIn(attempt, { user, reason, wrongGuess: false }, error);
    if (!verified || !user || user.status === 'invited')
      throw await refuse('passkey_invalid', signInInvalid());
    if (user.status === 'disabled') {
      throw await refuse(
        'account_disabled',
        new ApiError('account_disabled', { detail: 'This account has been disabled' }),
      );
    }
    if (ctx.config.requireVerifiedEmail && user.email_verified !== 1) {
      // REQUIRE_VERIFIED_EMAIL (docs/api.md §16): a passkey is no way around the unproven address,
      // as the password login is not. Said only after the assertion verified (no oracle).
      throw await refuse(
        'email_not_verified',
        new ApiError('email_not_verified', {
          detail:
            'Confirm your e-mail address first (POST /api/v1/email/verification sends a new link; a password-reset link proves it too)',
        }),
      );
    }
    // docs/api.md §23 sso_required, after the assertion verified; signIn asks again in its transaction.
    await ctx.signIn.checkAddress(ctx.db, { email: user.email, user }).catch(async (err: unknown) => {
      throw err instanceof ApiError ? await refuse(err.code, err) : err;
    });
    return ctx.db.transaction().execute((trx) =>
      signIn(ctx, trx, {
        user,
        client,
        amr: [verified.amr, 'user'],
        details: { method: 'passkey', passkey_id: verified.passkey.id },
        attempt,
      }),
    );
  });
  return outcome.tokens;
}
