import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import type { Role } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { ACCESS_TOKEN_ALG, type KeyStore } from './signing-keys.ts';

/** The claims of a Gatehouse access token (RFC 9068 profile, API.md §5). */
export interface AccessClaims {
  iss: string;
  sub: string;
  aud: string;
  sid: string;
  role: Role;
  iat: number;
  exp: number;
  jti: string;
}

export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  ttlS: number;
  /** Verified tokens remembered (least recently used go first); 0 turns the cache off. Default 10 000. */
  cacheSize?: number;
}

export interface AccessTokens {
  sign(subject: {
    userId: string;
    sessionId: string;
    role: Role;
  }): Promise<{ token: string; claims: AccessClaims }>;
  /** Verifies signature, algorithm, type, issuer, audience and lifetime; throws 401 ApiErrors. */
  verify(token: string): Promise<AccessClaims>;
}

const REQUIRED = ['iss', 'sub', 'aud', 'sid', 'role', 'iat', 'exp', 'jti'];
const DEFAULT_CACHE_SIZE = 10_000;

interface Verified {
  claims: AccessClaims;
  kid: string;
}

/**
 * Signs and verifies access tokens with the shared key store. A token's signature, header and
 * claims never change, so a successful verification is remembered by the token string until the
 * token's `exp` (or its key's unloading): signature checking was the largest cost of verify-token
 * (docs/benchmarks.md). Only the signature work is saved — callers still check the session.
 */
export function createAccessTokens(keys: KeyStore, settings: AccessTokenSettings): AccessTokens {
  const cacheSize = settings.cacheSize ?? DEFAULT_CACHE_SIZE;
  // A Map keeps insertion order: re-inserting on a hit makes its first key the least recently used.
  const verified = new Map<string, Verified>();

  const remembered = (token: string): AccessClaims | null => {
    const hit = verified.get(token);
    if (hit === undefined) return null;
    verified.delete(token);
    // jose's rule, no clock tolerance: expired once exp <= now (whole seconds).
    if (hit.claims.exp <= Math.floor(Date.now() / 1000) || !keys.hasKey(hit.kid)) return null;
    verified.set(token, hit);
    return hit.claims;
  };

  const remember = (token: string, claims: AccessClaims, kid: string) => {
    if (cacheSize === 0) return;
    if (verified.size >= cacheSize) verified.delete(verified.keys().next().value as string);
    verified.set(token, { claims, kid });
  };

  return {
    async sign({ userId, sessionId, role }) {
      const key = keys.signingKey();
      const iat = Math.floor(Date.now() / 1000);
      const claims: AccessClaims = {
        iss: settings.issuer,
        sub: userId,
        aud: settings.audience,
        sid: sessionId,
        role,
        iat,
        exp: iat + settings.ttlS,
        jti: uuidv7(),
      };
      const token = await new SignJWT({ sid: claims.sid, role: claims.role })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
        .setIssuer(claims.iss)
        .setSubject(claims.sub)
        .setAudience(claims.aud)
        .setIssuedAt(claims.iat)
        .setExpirationTime(claims.exp)
        .setJti(claims.jti)
        .sign(key.privateKey);
      return { token, claims };
    },

    async verify(token) {
      const known = remembered(token);
      if (known !== null) return known;
      try {
        const { payload, protectedHeader } = await jwtVerify(
          token,
          async (header) => {
            // jku, x5u and jwk headers are never consulted: keys come only from our own store.
            if (typeof header.kid !== 'string')
              throw new ApiError('token_invalid', { detail: 'The token has no kid' });
            const key = await keys.verificationKey(header.kid);
            if (!key)
              throw new ApiError('token_invalid', { detail: 'The token was signed by an unknown key' });
            return key.publicKey;
          },
          {
            algorithms: [ACCESS_TOKEN_ALG],
            issuer: settings.issuer,
            audience: settings.audience,
            typ: 'at+jwt',
            requiredClaims: REQUIRED,
          },
        );
        if (
          typeof payload.sid !== 'string' ||
          (payload.role !== 'admin' && payload.role !== 'user') ||
          typeof payload.jti !== 'string'
        ) {
          throw new ApiError('token_invalid', { detail: 'The token lacks Gatehouse claims' });
        }
        // Frozen: the same object answers every later request with this token.
        const claims = Object.freeze(payload) as unknown as AccessClaims;
        remember(token, claims, protectedHeader.kid as string);
        return claims;
      } catch (err) {
        if (err instanceof ApiError) throw err;
        if (err instanceof joseErrors.JWTExpired)
          throw new ApiError('token_expired', { detail: 'The token has expired' });
        throw new ApiError('token_invalid', { detail: describeJoseError(err) });
      }
    },
  };
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `The token's ${err.claim} claim is not accepted`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed)
    return 'The token is signed with an algorithm that is not accepted';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is not valid';
  return 'The token is malformed or not an access token';
}
