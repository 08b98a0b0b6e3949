import { ApiError } from '../platform/api-error.ts';
import type { RequireMfa } from '../platform/config.ts';
import type { Role } from '../platform/db/schema.ts';

/*
 * REQUIRE_MFA (docs/mfa.md "Requiring a second factor", ASVS 6.3.3): whose sessions must have been
 * opened with two factors. A session that was not is *enrolment-only*: its access token is issued
 * for ENROLLMENT_AUDIENCE (so no resource server and no `verify-token` takes it for a sign-in), it
 * has no refresh token, it lives ENROLLMENT_TTL_S, and the guard lets it reach only the endpoints
 * that add a second factor.
 */

/** The `aud` of an enrolment-only access token: never the audience a resource server expects. */
export const ENROLLMENT_AUDIENCE = 'urn:gatehouse:mfa-enrollment';

/** How long an enrolment-only session lives (as a pending TOTP enrolment, docs/api.md §13). */
export const ENROLLMENT_TTL_S = 600;

/** Whether REQUIRE_MFA asks a second factor of an account with this role. */
export function secondFactorRequired(setting: RequireMfa, role: Role): boolean {
  return setting === 'all' || (setting === 'admins' && role === 'admin');
}

/**
 * Whether a session's RFC 8176 methods name two factors: a password, a provider or an e-mail code
 * followed by a second factor (`["pwd","otp"]`, `["fed","hwk"]`, `["otp","mfa"]`), or a
 * user-verifying passkey (`["hwk","user"]`, a multi-factor authenticator on its own). One value
 * (`["pwd"]`, `["fed"]`, `["otp"]`) or none (a session older than `amr`) is one factor.
 */
export function isMultiFactor(amr: readonly string[] | null | undefined): boolean {
  return amr !== null && amr !== undefined && amr.length >= 2;
}

/** Whether a session of this account, opened with these methods, may only enrol a second factor. */
export function enrollmentOnly(
  setting: RequireMfa,
  role: Role,
  amr: readonly string[] | null | undefined,
): boolean {
  return setting !== 'off' && secondFactorRequired(setting, role) && !isMultiFactor(amr);
}

/** What an enrolment-only sign-in hands out instead of a token pair (docs/mfa.md). */
export interface EnrollmentGrant {
  enrollment_token: string;
  expires_in: number;
}

/**
 * The mark signIn leaves on the answer of an enrolment-only sign-in: the endpoint layer
 * (src/http/endpoint.ts) answers 403 `mfa_enrollment_required` with the grant instead of the tokens,
 * after the caller's transaction committed the session. A symbol: JSON never carries it.
 */
export const ENROLLMENT_GRANT: unique symbol = Symbol('gatehouse.enrollmentGrant');

/** The grant an answer carries, or null for a real sign-in. */
export function enrollmentGrantOf(body: unknown): EnrollmentGrant | null {
  if (typeof body !== 'object' || body === null) return null;
  return (body as { [ENROLLMENT_GRANT]?: EnrollmentGrant })[ENROLLMENT_GRANT] ?? null;
}

/** The refusal of an enrolment-only session outside enrolment, and of its OAuth sign-in (docs/mfa.md). */
export function enrollmentRequired(): ApiError {
  return new ApiError('mfa_enrollment_required', {
    detail:
      'This account must add a second factor (TOTP or a passkey) before it can do anything else; then sign in again with it',
  });
}

const SECOND_FACTORS = new Set(['otp', 'mfa', 'hwk', 'swk']);

/**
 * Whether a sign-in's RFC 8176 `amr` holds a second factor, as organizations' `require_mfa` asks on
 * their endpoints and in their tokens (docs/api.md §21, settled details): `otp`/`mfa` (or a passkey)
 * after a first factor (`["pwd","otp"]`, `["fed","mfa"]`), or a user-verifying passkey on its own
 * (`hwk`/`swk` with `user`). One method alone (`["pwd"]`, an e-mail code's `["otp"]`) is one factor.
 * The one definition for both: the organization endpoints and the authorization server agree.
 */
export function amrHasSecondFactor(amr: readonly string[] | undefined | null): boolean {
  if (!amr) return false;
  if ((amr.includes('hwk') || amr.includes('swk')) && amr.includes('user')) return true;
  return amr.length >= 2 && amr.slice(1).some((m) => SECOND_FACTORS.has(m));
}
