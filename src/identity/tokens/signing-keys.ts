import { createPrivateKey, generateKeyPair, type JsonWebKey, type KeyObject, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { importJWK, type JWK } from 'jose';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.ts';
import {
  findSigningKey,
  insertSigningKey,
  keysRetiredAfter,
  markSigningKeyRevoked,
  retireKeysBut,
  revokedAmong,
} from './signing-keys.queries.ts';

/**
 * The algorithms access tokens may be signed with (docs/api.md §14). ES256 is the default: every
 * mainstream JWT library verifies it, while EdDSA (Ed25519) is still refused by several
 * (jsonwebtoken, get-jwks, Authlib by default); RS256 is the one RFC 9068 makes mandatory.
 */
export const ACCESS_TOKEN_ALGS = ['ES256', 'RS256', 'EdDSA'] as const;
export type AccessTokenAlg = (typeof ACCESS_TOKEN_ALGS)[number];

export interface LoadedKey {
  kid: string;
  alg: AccessTokenAlg;
  publicJwk: JWK;
  /** WebCrypto key for jose's jwtVerify (imported once per load, not per token). */
  verifyKey: CryptoKey | Uint8Array;
  /** node:crypto key: tokens are signed synchronously on the event loop (access-tokens.ts). */
  privateKey: KeyObject;
  createdAt: number;
  retiredAt: number | null;
}

/**
 * The signing keys, shared by every instance through the database. Each instance signs with the
 * newest unretired key of its own ACCESS_TOKEN_ALG; every key that may still have unexpired tokens
 * verifies and is published in the JWKS, whatever its algorithm.
 */
export interface KeyStore {
  /** The algorithm this instance signs with. */
  readonly alg: AccessTokenAlg;
  signingKey(): LoadedKey;
  /** A verification key by kid; reloads from the database once on a miss (another instance rotated). */
  verificationKey(kid: string): Promise<LoadedKey | null>;
  /** True while a key is loaded (a remembered caller stays valid only as long as its token's key). */
  hasKey(kid: string): boolean;
  jwks(): { keys: JWK[] };
  /** The algorithms of the published keys, in JWKS order (the discovery documents list them). */
  algorithms(): AccessTokenAlg[];
  /**
   * The loaded keys as private JWKs for the authorization server (docs/api.md §17): current keys
   * first, so the provider signs with a current key of each algorithm and verifies with every one.
   */
  privateJwks(): JWK[];
  /** True while an unretired key of `alg` is loaded. */
  hasCurrentKey(alg: AccessTokenAlg): boolean;
  reload(): Promise<void>;
  /**
   * Drops loaded keys that were revoked since (`gatehouse rotate-keys --revoke`, from any
   * instance or the CLI): one small query, run every 2 s (src/kernel/context.ts). True when one was dropped.
   */
  dropRevoked(): Promise<boolean>;
}

const generate = promisify(generateKeyPair);

async function newKeyPair(alg: AccessTokenAlg) {
  switch (alg) {
    case 'ES256':
      return generate('ec', { namedCurve: 'P-256' });
    case 'RS256':
      return generate('rsa', { modulusLength: 2048 });
    case 'EdDSA':
      return generate('ed25519');
  }
}

/**
 * Adds a new signing key of `alg` and retires every other current key (they keep verifying for one
 * access-token TTL). Used by `gatehouse rotate-keys` and when an instance starts with an algorithm
 * that has no current key (a switch of ACCESS_TOKEN_ALG). Pass a transaction to commit the
 * rotation with its audit entry.
 */
export async function rotateSigningKey(
  db: Kysely<DB> | Transaction<DB>,
  alg: AccessTokenAlg,
): Promise<string> {
  const now = Date.now();
  const kid = await insertKey(db, alg, now);
  await retireKeysBut(db, kid, now);
  return kid;
}

async function insertKey(
  db: Kysely<DB> | Transaction<DB>,
  alg: AccessTokenAlg,
  now: number,
): Promise<string> {
  const { publicKey, privateKey } = await newKeyPair(alg);
  const kid = randomUUID();
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg };
  await insertSigningKey(db, {
    kid,
    alg,
    public_jwk: JSON.stringify(publicJwk),
    private_jwk: JSON.stringify(privateJwk),
    created_at: now,
    retired_at: null,
  });
  return kid;
}

/**
 * Adds a key of `alg` without retiring any other: the authorization server's RS256 key for ID
 * tokens beside an instance signing with ES256 or EdDSA (docs/api.md §17).
 */
export async function addSigningKey(db: Kysely<DB> | Transaction<DB>, alg: AccessTokenAlg): Promise<string> {
  return insertKey(db, alg, Date.now());
}

export type Revocation =
  | { status: 'unknown' }
  | { status: 'already'; alg: string }
  | { status: 'revoked'; alg: string; replacement: string | null };

/**
 * Revokes a key (docs/operations.md, "A compromised signing key"): it is never loaded again, so
 * tokens it signed stop verifying and it leaves the JWKS. A key that is still current for its
 * algorithm is replaced by a new key of that algorithm in the same transaction, never left without
 * a successor: revoking the only signing key rotates first rather than refusing (a compromised
 * key must go now, and a refusal would only make the operator type a second command).
 */
export async function revokeSigningKey(db: Kysely<DB> | Transaction<DB>, kid: string): Promise<Revocation> {
  const row = await findSigningKey(db, kid);
  if (!row) return { status: 'unknown' };
  if (row.revoked_at !== null) return { status: 'already', alg: row.alg };
  const now = Date.now();
  const replacement = row.retired_at === null && isAlg(row.alg) ? await insertKey(db, row.alg, now) : null;
  await markSigningKeyRevoked(db, kid, now);
  return { status: 'revoked', alg: row.alg, replacement };
}

const isAlg = (alg: string): alg is AccessTokenAlg => (ACCESS_TOKEN_ALGS as readonly string[]).includes(alg);

/**
 * Loads the keys and keeps them fresh. At start, an algorithm without a current key gets one and
 * the other algorithms' keys are retired (the switch of docs/api.md §14; tokens they signed keep
 * verifying until expiry). On a later reload a missing key of our algorithm is only added, never
 * at the others' expense: during a rolling change each instance keeps signing with its own
 * algorithm and nothing flip-flops.
 */
export async function createKeyStore(
  db: Kysely<DB>,
  settings: { accessTokenTtlS: number; alg: AccessTokenAlg; longestTokenTtlS?: number },
): Promise<KeyStore> {
  const { alg } = settings;
  let keys: LoadedKey[] = [];
  let lastMissReload = 0;

  const current = () => keys.find((k) => k.alg === alg && k.retiredAt === null);

  const load = async () => {
    // A retired key verifies for the longest lifetime of a token it may have signed after its
    // retirement, plus a minute: instances notice a rotation at their next reload (within a
    // minute) and may sign with the old key until then.
    const lifetimeS = Math.max(settings.accessTokenTtlS, settings.longestTokenTtlS ?? 0);
    const cutoff = Date.now() - lifetimeS * 1000 - 60_000;
    const rows = await keysRetiredAfter(db, cutoff);
    const loaded: LoadedKey[] = [];
    for (const row of rows) {
      if (!isAlg(row.alg)) continue;
      const publicJwk = JSON.parse(row.public_jwk) as JWK;
      loaded.push({
        kid: row.kid,
        alg: row.alg,
        publicJwk,
        verifyKey: await importJWK(publicJwk, row.alg),
        privateKey: createPrivateKey({ key: JSON.parse(row.private_jwk) as JsonWebKey, format: 'jwk' }),
        createdAt: row.created_at,
        retiredAt: row.retired_at,
      });
    }
    keys = loaded;
  };

  await load();
  if (!current()) {
    await rotateSigningKey(db, alg);
    await load();
  }

  const reload = async () => {
    await load();
    if (!current()) {
      await insertKey(db, alg, Date.now());
      await load();
    }
  };

  return {
    alg,
    signingKey() {
      // Between a rotation elsewhere and our reload, the newest key of our algorithm still signs.
      const key = current() ?? keys.find((k) => k.alg === alg);
      if (!key) throw new Error(`no ${alg} signing key loaded`);
      return key;
    },
    async verificationKey(kid) {
      const hit = keys.find((k) => k.kid === kid);
      if (hit) return hit;
      // A kid we do not know may be a key another instance just created; look once a second at most,
      // so a flood of forged kids cannot turn into a flood of queries.
      if (Date.now() - lastMissReload < 1000) return null;
      lastMissReload = Date.now();
      await load();
      return keys.find((k) => k.kid === kid) ?? null;
    },
    hasKey: (kid) => keys.some((k) => k.kid === kid),
    jwks: () => ({ keys: keys.map((k) => k.publicJwk) }),
    algorithms: () => [...new Set(keys.map((k) => k.alg))],
    privateJwks: () =>
      [...keys]
        .sort(
          (a, b) => Number(a.retiredAt !== null) - Number(b.retiredAt !== null) || b.createdAt - a.createdAt,
        )
        .map((k) => ({
          ...(k.privateKey.export({ format: 'jwk' }) as JWK),
          kid: k.kid,
          alg: k.alg,
          use: 'sig',
        })),
    hasCurrentKey: (a) => keys.some((k) => k.alg === a && k.retiredAt === null),
    reload,
    async dropRevoked() {
      const revoked = await revokedAmong(
        db,
        keys.map((k) => k.kid),
      );
      if (revoked.length === 0) return false;
      // Unloaded at once: verification, the verified-token cache (hasKey) and the JWKS all read `keys`.
      keys = keys.filter((k) => !revoked.includes(k.kid));
      // The successor the revocation added (or, failing that, a new key) takes over signing.
      await reload();
      return true;
    },
  };
}
