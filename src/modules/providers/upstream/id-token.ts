import { createHash, timingSafeEqual } from 'node:crypto';
import {
  decodeProtectedHeader,
  type JWTPayload,
  type JWTVerifyOptions,
  errors as joseErrors,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose';
import { ApiError } from '../../../platform/api-error.ts';
import type { OidcClient } from './oidc-client.ts';

/** Allowed clock difference for exp, nbf and iat (docs/api.md §7). */
export const CLOCK_TOLERANCE_S = 60;

/** What a verified ID token says about its user. */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  /** The `email` claim as sent (not normalized), or null. */
  email: string | null;
  /** True only for the JSON boolean `true`. */
  emailVerified: boolean;
  name: string | null;
  /** The token's `exp`, epoch ms (how long it must be remembered as used: docs/api.md §16). */
  expiresAt: number;
}

/** An identity the provider vouched for, plus what allowed_domains looks at. */
export interface UpstreamIdentity {
  identity: VerifiedIdentity;
  /** Google's `hd` or Microsoft's `tid`, when the provider has one. */
  organization: string | null;
  /** The raw ID token (oidc), reserved as used in the sign-in's transaction (docs/api.md §16). */
  idToken: string | null;
}

// Token types that are JWTs from the same provider but not ID tokens (RFC 9068, OIDC Back-Channel Logout).
const FOREIGN_TYPES = new Set(['at+jwt', 'logout+jwt']);

/** A 401 naming the check that failed; the token itself is never part of it. */
export function tokenInvalid(check: string, reason: string): ApiError {
  return new ApiError('idp_token_invalid', { detail: `ID token rejected (${check}): ${reason}` });
}

/**
 * Verifies an ID token per OpenID Connect Core 3.1.3.7: allowed `alg` (checked before the provider is
 * contacted), signature against the provider's JWKS, exact `iss`, `aud` containing the client id,
 * `azp`, `exp`/`nbf`/`iat` with 60 s tolerance, `nonce`, and a `typ` that is not another token type.
 */
export async function verifyIdToken(
  client: OidcClient,
  token: string,
  nonce: string | undefined,
): Promise<VerifiedIdentity> {
  const { settings } = client;
  precheck(token, settings.allowedAlgs);
  const doc = await client.discovery();
  const options: JWTVerifyOptions = {
    algorithms: [...settings.allowedAlgs],
    issuer: settings.issuer,
    audience: settings.clientId,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ['sub', 'exp', 'iat'],
  };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, client.keyResolver(doc), options));
  } catch (err) {
    if (!(err instanceof joseErrors.JWKSMultipleMatchingKeys)) throw mapJoseError(err);
    payload = await verifyWithCandidates(token, err, options);
  }
  return checkClaims(payload, settings.clientId, nonce, settings.maxTokenAgeS);
}

/** Format, `alg` and `typ`, from the header alone: refusals that need no network round trip. */
function precheck(token: string, allowedAlgs: readonly string[]): void {
  if (token.split('.').length !== 3) {
    throw tokenInvalid('format', 'the id_token is not a signed JWT in compact form');
  }
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw tokenInvalid('format', 'the id_token header is not valid');
  }
  const { alg, typ } = header;
  if (typeof alg !== 'string' || !allowedAlgs.includes(alg)) {
    // Only a short, plain alg name is repeated back; anything else stays out of the response.
    const shown = typeof alg === 'string' && /^[A-Za-z0-9+-]{1,16}$/.test(alg) ? ` ${alg}` : '';
    throw tokenInvalid('alg', `the signing algorithm${shown} is not allowed`);
  }
  if (typ !== undefined) {
    if (typeof typ !== 'string') throw tokenInvalid('typ', 'the typ header is not a string');
    const normalized = typ.toLowerCase().replace(/^application\//, '');
    if (FOREIGN_TYPES.has(normalized)) throw tokenInvalid('typ', 'the token is not an ID token');
  }
}

/** Several keys match a header without `kid` (or with a shared one): the token must verify under one of them. */
async function verifyWithCandidates(
  token: string,
  candidates: joseErrors.JWKSMultipleMatchingKeys,
  options: JWTVerifyOptions,
): Promise<JWTPayload> {
  for await (const key of candidates) {
    try {
      return (await jwtVerify(token, key, options)).payload;
    } catch (err) {
      if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) throw mapJoseError(err);
    }
  }
  throw tokenInvalid('signature', 'the signature does not verify');
}

// C0 and C1 controls (NUL included): no identifier, address or name needs them, and PostgreSQL
// cannot store NUL at all: refused here, a claim never reaches the database with one.
export function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

function checkClaims(
  payload: JWTPayload,
  clientId: string,
  nonce: string | undefined,
  maxAgeS: number,
): VerifiedIdentity {
  const { sub, iat, aud, azp } = payload;
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 255) {
    throw tokenInvalid('sub', 'the sub claim must be a string of 1 to 255 characters');
  }
  const now = Date.now() / 1000;
  if (typeof iat !== 'number' || iat > now + CLOCK_TOLERANCE_S) {
    throw tokenInvalid('iat', 'the token claims to be issued in the future');
  }
  // Bounded whether or not a nonce binds the token: a captured token stays replayable only briefly.
  if (iat < now - maxAgeS - CLOCK_TOLERANCE_S) {
    throw tokenInvalid('iat', `the token was issued more than ${maxAgeS} seconds ago (OIDC_MAX_TOKEN_AGE_S)`);
  }
  for (const claim of ['sub', 'email', 'name', 'given_name', 'family_name'] as const) {
    const value = payload[claim];
    if (typeof value === 'string' && hasControlCharacter(value)) {
      throw tokenInvalid(claim, `the ${claim} claim contains a control character`);
    }
  }
  const audiences = Array.isArray(aud) ? aud : [aud];
  // Core 3.1.3.7 (4, 5): several audiences need an authorized party, and it must be this client.
  if (audiences.length > 1 && azp === undefined) {
    throw tokenInvalid('azp', 'the token has several audiences but no azp claim');
  }
  if (azp !== undefined && azp !== clientId) {
    throw tokenInvalid('azp', 'the token was issued to another authorized party');
  }
  if (nonce !== undefined) {
    if (typeof payload.nonce !== 'string' || !sameString(payload.nonce, nonce)) {
      throw tokenInvalid('nonce', 'the nonce does not match the one sent');
    }
  } else if (payload.nonce !== undefined) {
    // Otherwise a token captured from a nonce-bound sign-in could be replayed by leaving the nonce out.
    throw tokenInvalid('nonce', 'the token carries a nonce, so the request must send it');
  }
  const email = typeof payload.email === 'string' ? payload.email : null;
  return {
    issuer: String(payload.iss),
    subject: sub,
    email,
    emailVerified: payload.email_verified === true,
    name: displayName(payload),
    // `exp` is a required claim, checked by jwtVerify to be a number.
    expiresAt: Number(payload.exp) * 1000,
  };
}

export function displayName(payload: JWTPayload): string | null {
  if (typeof payload.name === 'string' && payload.name.trim() !== '') return payload.name.trim();
  const parts = [payload.given_name, payload.family_name].filter(
    (p): p is string => typeof p === 'string' && p.trim() !== '',
  );
  return parts.length > 0 ? parts.map((p) => p.trim()).join(' ') : null;
}

function sameString(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

const CLAIM_REASONS: Record<string, string> = {
  iss: 'the issuer is not the configured provider',
  aud: 'the token was not issued for this client',
  nbf: 'the token is not valid yet',
  iat: 'the issued-at time is not acceptable',
  exp: 'the token has expired',
  sub: 'the subject is not acceptable',
};

/** Turns a jose verification error into the 401 naming the failed check; other errors pass through. */
export function mapJoseError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) {
    return tokenInvalid('alg', 'the signing algorithm is not allowed');
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    return tokenInvalid('signature', "no key in the provider's key set matches the token's kid and alg");
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return tokenInvalid('signature', 'the signature does not verify');
  }
  if (err instanceof joseErrors.JWTExpired) return tokenInvalid('exp', 'the token has expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = /^[a-z_]{1,32}$/.test(err.claim) ? err.claim : 'claims';
    if (err.reason === 'missing') return tokenInvalid(claim, `the ${claim} claim is missing`);
    if (err.reason === 'invalid') return tokenInvalid(claim, `the ${claim} claim is malformed`);
    return tokenInvalid(claim, CLAIM_REASONS[claim] ?? `the ${claim} claim is not acceptable`);
  }
  if (err instanceof joseErrors.JOSENotSupported) {
    return tokenInvalid('alg', 'the algorithm or key type is not supported');
  }
  if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) {
    return tokenInvalid('format', 'the id_token is not a well-formed signed JWT');
  }
  if (err instanceof joseErrors.JOSEError)
    return tokenInvalid('signature', 'the token could not be verified');
  return err;
}
