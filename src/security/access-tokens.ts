import { sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Role } from '../db/schema.ts';
import { ApiError } from '../errors.ts';
import { ACCESS_TOKEN_ALG, type KeyStore } from './signing-keys.ts';

/** The claims of a Gatehouse access token (RFC 9068 profile, docs/api.md §5). */
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
  /** The claims when `verify` accepted this token before and it still holds (not expired, key loaded); else null. */
  verifiedBefore(token: string): AccessClaims | null;
}

const REQUIRED = ['iss', 'sub', 'aud', 'sid', 'role', 'iat', 'exp', 'jti'];
// The order jose checks presence in (it names the first claim missing).
const PRESENCE_ORDER = [...new Set([...REQUIRED, 'aud', 'iss'].reverse())];
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
      if (key.alg !== ACCESS_TOKEN_ALG) throw new Error(`signing key ${key.kid} is not ${ACCESS_TOKEN_ALG}`);
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
      const header = { alg: key.alg, kid: key.kid, typ: 'at+jwt' };
      const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
      // node:crypto on this thread, not WebCrypto: jose's WebCrypto jobs queue on the libuv pool
      // behind password hashing, so during a login storm each sign waited for an argon2 run while
      // its transaction held the SQLite connection (docs/benchmarks.md).
      const signature = cryptoSign(null, Buffer.from(input), key.privateKey).toString('base64url');
      return { token: `${input}.${signature}`, claims };
    },

    verifiedBefore: remembered,

    async verify(token) {
      const known = remembered(token);
      if (known !== null) return known;
      const { claims, kid } = await verifyCompact(token, keys, settings);
      remember(token, claims, kid);
      return claims;
    },
  };
}

const invalid = (detail: string) => new ApiError('token_invalid', { detail });
const MALFORMED = 'The token is malformed or not an access token';
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const SIGNATURE = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** A JSON object from a base64url segment, or null (jose's isObject: a plain object, not an array). */
function decodeObject(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(utf8.decode(Buffer.from(segment, 'base64url')));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const proto = Object.getPrototypeOf(value);
    return proto === Object.prototype || proto === null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** jose's normalisation of `typ`: case-insensitive, `application/` optional. */
function normalizeTyp(value: string): string {
  const lower = value.toLowerCase();
  return value.includes('/') ? lower : `application/${lower}`;
}

/**
 * jose's jwtVerify, restated with node:crypto's one-shot Ed25519 verify (synchronous, on this
 * thread: no libuv-pool queue behind argon2) and checked in jose's order, so every refusal keeps
 * the code and detail it had: compact form, header (crit/b64 refused, alg pinned), key by kid,
 * signature, claims object, typ, required claims, iss, aud, iat/nbf/exp.
 */
async function verifyCompact(
  token: string,
  keys: KeyStore,
  settings: AccessTokenSettings,
): Promise<{ claims: AccessClaims; kid: string }> {
  const parts = token.split('.');
  const [h = '', p = '', s = ''] = parts;
  if (parts.length !== 3 || !SEGMENT.test(h)) throw invalid(MALFORMED);
  const header = decodeObject(h);
  // No extension is understood, so any `crit` (and with it an unencoded `b64` payload) is refused.
  if (header === null || header.crit !== undefined || header.b64 !== undefined) throw invalid(MALFORMED);
  if (typeof header.alg !== 'string' || header.alg === '') throw invalid(MALFORMED);
  if (header.alg !== ACCESS_TOKEN_ALG) {
    throw invalid('The token is signed with an algorithm that is not accepted');
  }
  // jku, x5u and jwk headers are never consulted: keys come only from our own store.
  if (typeof header.kid !== 'string') throw invalid('The token has no kid');
  const key = await keys.verificationKey(header.kid);
  if (!key) throw invalid('The token was signed by an unknown key');
  if (!SIGNATURE.test(s)) throw invalid(MALFORMED);
  let verified = false;
  try {
    verified =
      key.alg === ACCESS_TOKEN_ALG &&
      cryptoVerify(null, Buffer.from(`${h}.${p}`), key.publicKey, Buffer.from(s, 'base64url'));
  } catch {
    verified = false;
  }
  if (!verified) throw invalid('The token signature is not valid');

  const payload = SEGMENT.test(p) ? decodeObject(p) : null;
  if (payload === null) throw invalid(MALFORMED);
  const claimRefused = (claim: string) => invalid(`The token's ${claim} claim is not accepted`);
  if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== normalizeTyp('at+jwt')) {
    throw claimRefused('typ');
  }
  for (const claim of PRESENCE_ORDER) if (!Object.hasOwn(payload, claim)) throw claimRefused(claim);
  if (payload.iss !== settings.issuer) throw claimRefused('iss');
  const aud = payload.aud;
  if (!(aud === settings.audience || (Array.isArray(aud) && aud.includes(settings.audience)))) {
    throw claimRefused('aud');
  }
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.iat !== 'number') throw claimRefused('iat');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now))
    throw claimRefused('nbf');
  if (typeof payload.exp !== 'number') throw claimRefused('exp');
  if (payload.exp <= now) throw new ApiError('token_expired', { detail: 'The token has expired' });
  if (
    typeof payload.sid !== 'string' ||
    (payload.role !== 'admin' && payload.role !== 'user') ||
    typeof payload.jti !== 'string'
  ) {
    throw invalid('The token lacks Gatehouse claims');
  }
  // Frozen: the same object answers every later request with this token.
  return { claims: Object.freeze(payload) as unknown as AccessClaims, kid: header.kid };
}
