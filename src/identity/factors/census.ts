import { ApiError } from '../../platform/api-error.ts';
import type { HeldFactors } from './census.queries.ts';

/** What `methods` lists (docs/api.md §13), in this order. */
export type SecondFactorMethod = 'totp' | 'recovery_code' | 'passkey';

/** The switches that decide which held factors can be used. */
export interface FactorModules {
  mfa: boolean;
  passkeys: boolean;
}

/**
 * docs/api.md §16 "A sign-in method never silently disappears": the second factors a sign-in (or a
 * password reset) must ask for, given what the account holds and which modules are on.
 * - No TOTP and no passkey: `[]`, nothing is asked.
 * - A factor that can be used: the usual `methods`. TOTP needs `mfa` (its endpoint completes the
 *   sign-in); a passkey as second factor needs `mfa` and `passkeys`. Recovery codes are listed
 *   beside a usable factor they back up, never alone.
 * - A factor held but none usable (its module is off): null. The sign-in must not go ahead with
 *   fewer factors than the account set up; the caller answers 403 `second_factor_unavailable`.
 *   An account holding TOTP and a passkey while only `passkeys` is off still signs in with TOTP.
 */
export function usableSecondFactors(held: HeldFactors, on: FactorModules): SecondFactorMethod[] | null {
  const hasPasskey = held.passkeys > 0;
  if (!held.totp && !hasPasskey) return [];
  const totp = on.mfa && held.totp;
  const passkey = on.mfa && on.passkeys && hasPasskey;
  if (!totp && !passkey) return null;
  const methods: SecondFactorMethod[] = [];
  if (totp) methods.push('totp');
  if (held.recoveryCodes > 0) methods.push('recovery_code');
  if (passkey) methods.push('passkey');
  return methods;
}

/**
 * Whether an account holding these factors can still sign in with the modules so: by password (or
 * an identity provider) and its usable second factor, or by a passkey alone (POST /login/passkey, a
 * complete sign-in of its own while `passkeys` is on).
 */
export function canSignIn(held: HeldFactors, on: FactorModules): boolean {
  return usableSecondFactors(held, on) !== null || (on.passkeys && held.passkeys > 0);
}

/** 403 `second_factor_unavailable` (docs/api.md §16). */
export function secondFactorUnavailable(): ApiError {
  return new ApiError('second_factor_unavailable', {
    detail:
      'This account has a second factor that is switched off on this service; an administrator must reset its second factors (gatehouse users mfa-reset) before it can sign in',
  });
}
