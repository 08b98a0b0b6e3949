import { sign as cryptoSign } from 'node:crypto';
import { errors, type JWTHeaderParameters, type JWTPayload, jwtVerify } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../platform/api-error.ts';
import type { RequireMfa } from '../../platform/config.ts';
import type { Role } from '../../platform/db/schema.ts';
import { ENROLLMENT_AUDIENCE, enrollmentOnly } from '../require-mfa.ts';
import { ACCESS_TOKEN_ALGS, type AccessTokenAlg, type KeyStore, type LoadedKey } from './signing-keys.ts';

/**
 * The claims of a Gatehouse access token (RFC 9068 profile, docs/api.md §5 and §14). `client_id`,
 * `auth_time`, `email` and `email_verified` are absent only from tokens signed before they were
 * added (still accepted until they expire); `amr` is absent for sessions opened before it was kept.
 */
export interface AccessClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  jti: string;
  client_id?: string;
  auth_time?: number;
  sid: string;
  role: Role;
  amr?: string[];
  email?: string;
  email_verified?: boolean;
  /** The user's global roles (docs/api.md §21) while `organizations` is on and they hold any. */
  roles?: string[];
}

export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  /** RFC 9068 `client_id`: docs/api.md §14 defaults it to the audience. */
  clientId?: string;
  ttlS: number;
  /** Verified tokens remembered (least recently used go first); 0 turns the cache off. Default 10 000. */
  cacheSize?: number;
  /**
   * REQUIRE_MFA (src/identity/require-mfa.ts): a session it leaves enrolment-only gets tokens for
   * ENROLLMENT_AUDIENCE, whoever signs them (a sign-in or a refresh). Default `off`.
   */
  requireMfa?: RequireMfa;
}

/** What one token is issued for: its user and the session it belongs to. */
export interface TokenSubject {
  user: { id: string; role: Role; email: string; email_verified: number | boolean };
  session: {
    id: string;
    /** RFC 8176 methods of the session's authentication; null for sessions that predate it (claim left out). */
    amr: readonly string[] | null;
    /** When the user authenticated, epoch milliseconds (the session's `auth_time`, kept across refreshes). */
    authTime: number;
  };
  /** Global roles for the `roles` claim (docs/api.md §21); none or empty: no claim. */
  roles?: readonly string[];
}

/**
 * Extra claims for a token about to be signed, given every claim it will carry (the claims hook,
 * claims-hook.ts): merged after them. It may throw to sign nothing (the hook's `deny`).
 */
export type ExtraClaims = (claims: Readonly<AccessClaims>) => Promise<Record<string, unknown>>;

export interface AccessTokens {
  sign(subject: TokenSubject, extra?: ExtraClaims): Promise<{ token: string; claims: AccessClaims }>;
  /** Verifies signature, algorithm, type, issuer, audience and lifetime with jose; throws 401 ApiErrors. */
  verify(token: string): Promise<AccessClaims>;
  /** True while claims `verify` returned still hold: not expired, and their key still loaded. */
  stillValid(claims: AccessClaims): boolean;
  /**
   * Verifies an RFC 9068 JWT the authorization server signed for `audience` (exactly), with the same
   * keys and checks as `verify` but none of Gatehouse's session claims; throws 401 ApiErrors.
   */
  verifyFor(token: string, audience: string): Promise<JWTPayload>;
}

// Required in every token, checked by jose. client_id, auth_time and email are not required so that
// tokens issued before they existed keep verifying through an upgrade. Gatehouse's own claims
// (`sid`, `role`) are checked after the audience: jose checks presence first, so a resource's token
// (which has neither) would otherwise be refused for its role claim instead of its audience.
const REQUIRED = ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'];

const DEFAULT_CACHE_SIZE = 10_000;

const invalid = (detail: string) => new ApiError('token_invalid', { detail });
const MALFORMED = 'The token is malformed or not an access token';
const WRONG_ALG = 'The token is signed with an algorithm that is not accepted';

/** node:crypto's parameters for a JWS algorithm (RFC 7518: ECDSA signatures are r‖s, not DER). */
function signatureOf(alg: AccessTokenAlg, input: Buffer, key: LoadedKey['privateKey']): Buffer {
  switch (alg) {
    case 'ES256':
      return cryptoSign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      return cryptoSign('sha256', input, key);
    case 'EdDSA':
      return cryptoSign(null, input, key);
  }
}

/**
 * Signs access tokens with the key store's current key and verifies them with jose against every
 * loaded key. A token's signature, header and claims never change, so a successful verification is
 * remembered by the token string until the token's `exp` (or its key's unloading): jwtVerify was
 * most of the CPU of authenticating a request that reads the session rows (PostgreSQL always,
 * SQLite after any write), and the cache halved verify-token's CPU per response on PostgreSQL in a
 * same-run A/B (docs/benchmarks.md, "Verified-token cache"). Only the signature work is saved:
 * callers still check the session. `cacheSize: 0` (VERIFIED_TOKEN_CACHE_SIZE=0) turns it off.
 */
export function createAccessTokens(keys: KeyStore, settings: AccessTokenSettings): AccessTokens {
  const clientId = settings.clientId ?? settings.audience;
  const cacheSize = settings.cacheSize ?? DEFAULT_CACHE_SIZE;
  // The kid each verified claims object was checked with (stillValid asks whether it is loaded).
  const kids = new WeakMap<AccessClaims, string>();
  // A Map keeps insertion order: re-inserting on a hit makes its first key the least recently used.
  const verified = new Map<string, AccessClaims>();

  const stillValid = (claims: AccessClaims): boolean => {
    const kid = kids.get(claims);
    // jose's rule, no clock tolerance: expired once exp <= now (whole seconds).
    return kid !== undefined && claims.exp > Math.floor(Date.now() / 1000) && keys.hasKey(kid);
  };

  // jose calls this with the protected header: the key comes only from our own store, by kid, and
  // must be of the header's algorithm (jku, x5u and jwk headers are never consulted).
  const keyFor = async (header: JWTHeaderParameters) => {
    if (typeof header.kid !== 'string') throw invalid('The token has no kid');
    const key = await keys.verificationKey(header.kid);
    if (!key) throw invalid('The token was signed by an unknown key');
    if (key.alg !== header.alg) throw invalid(WRONG_ALG);
    return key.verifyKey;
  };

  return {
    async sign({ user, session, roles }, extra) {
      const key = keys.signingKey();
      const iat = Math.floor(Date.now() / 1000);
      const enrolment = enrollmentOnly(settings.requireMfa ?? 'off', user.role, session.amr);
      const base: AccessClaims = {
        iss: settings.issuer,
        sub: user.id,
        aud: enrolment ? ENROLLMENT_AUDIENCE : settings.audience,
        exp: iat + settings.ttlS,
        iat,
        jti: uuidv7(),
        client_id: clientId,
        auth_time: Math.floor(session.authTime / 1000),
        sid: session.id,
        role: user.role,
        ...(session.amr === null ? {} : { amr: [...session.amr] }),
        email: user.email,
        email_verified: Boolean(user.email_verified),
        // An enrolment-only token acts for nothing but the enrolment: no roles.
        ...(roles !== undefined && roles.length > 0 && !enrolment ? { roles: [...roles] } : {}),
      };
      // Full tokens only: an enrolment-only token is Gatehouse's own step, for no other service.
      const added = extra && !enrolment ? await extra(base) : {};
      const claims: AccessClaims = { ...base, ...added };
      const header = { alg: key.alg, kid: key.kid, typ: 'at+jwt' };
      const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
      // node:crypto on this thread, not WebCrypto: jose's WebCrypto jobs queue on the libuv pool
      // behind password hashing, so during a login storm each sign waited for an argon2 run while
      // its transaction held the SQLite connection (docs/benchmarks.md).
      const signature = signatureOf(key.alg, Buffer.from(input), key.privateKey).toString('base64url');
      return { token: `${input}.${signature}`, claims };
    },

    async verify(token) {
      const hit = verified.get(token);
      if (hit !== undefined) {
        verified.delete(token);
        if (stillValid(hit)) {
          verified.set(token, hit);
          return hit;
        }
      }
      const claims = await verifyWithJose(token);
      if (cacheSize > 0) {
        if (verified.size >= cacheSize) verified.delete(verified.keys().next().value as string);
        verified.set(token, claims);
      }
      return claims;
    },

    stillValid,

    async verifyFor(token, audience) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keyFor, {
          algorithms: [...ACCESS_TOKEN_ALGS],
          issuer: settings.issuer,
          audience,
          typ: 'at+jwt',
          requiredClaims: [...REQUIRED, 'client_id'],
        }));
      } catch (err) {
        throw refusal(err);
      }
      if (payload.aud !== audience) throw invalid("The token's aud claim is not accepted");
      return payload;
    },
  };

  async function verifyWithJose(token: string): Promise<AccessClaims> {
    let result: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      result = await jwtVerify(token, keyFor, {
        algorithms: [...ACCESS_TOKEN_ALGS],
        issuer: settings.issuer,
        audience: [settings.audience, ENROLLMENT_AUDIENCE],
        typ: 'at+jwt',
        requiredClaims: REQUIRED,
      });
    } catch (err) {
      throw refusal(err);
    }
    const { payload, protectedHeader } = result;
    // docs/api.md §16 "Gatehouse's own API accepts only its own audience": jose's audience option
    // accepts an array that merely contains it, so the claim is checked for being exactly it.
    // An enrolment-only token (REQUIRE_MFA) is accepted here; the guard lets it reach only enrolment.
    if (payload.aud !== settings.audience && payload.aud !== ENROLLMENT_AUDIENCE) {
      throw invalid("The token's aud claim is not accepted");
    }
    if (
      typeof payload.sid !== 'string' ||
      (payload.role !== 'admin' && payload.role !== 'user') ||
      typeof payload.jti !== 'string'
    ) {
      throw invalid('The token lacks Gatehouse claims');
    }
    // Frozen: the same object answers every later request with this token.
    const claims = Object.freeze(payload) as unknown as AccessClaims;
    kids.set(claims, protectedHeader.kid as string);
    return claims;
  }
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** jose's refusal as the API's 401: token_expired for an expired token, token_invalid for the rest. */
function refusal(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof errors.JWTExpired)
    return new ApiError('token_expired', { detail: 'The token has expired' });
  if (err instanceof errors.JWTClaimValidationFailed) {
    return invalid(`The token's ${err.claim} claim is not accepted`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return invalid(WRONG_ALG);
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return invalid('The token signature is not valid');
  if (err instanceof errors.JOSEError) return invalid(MALFORMED);
  // jose throws TypeErrors for inputs it cannot even parse (e.g. a non-string); never a 500 for a token.
  if (err instanceof TypeError) return invalid(MALFORMED);
  throw err;
}
