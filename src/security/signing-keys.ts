import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

/** Access tokens are signed with Ed25519 (EdDSA): small keys and signatures, fast to verify (bench/). */
export const ACCESS_TOKEN_ALG = 'EdDSA';

type KeyLike = CryptoKey | Uint8Array;

export interface LoadedKey {
  kid: string;
  alg: string;
  publicJwk: JWK;
  publicKey: KeyLike;
  privateKey: KeyLike;
  createdAt: number;
  retiredAt: number | null;
}

/**
 * The signing keys, shared by every instance through the database. The newest unretired key signs;
 * every key that may still have unexpired tokens verifies and is published in the JWKS.
 */
export interface KeyStore {
  signingKey(): LoadedKey;
  /** A verification key by kid; reloads from the database once on a miss (another instance rotated). */
  verificationKey(kid: string): Promise<LoadedKey | null>;
  jwks(): { keys: JWK[] };
  reload(): Promise<void>;
}

/**
 * Adds a new signing key and retires the current ones (they keep verifying for one access-token TTL).
 * Pass a transaction to commit the rotation with its audit entry.
 */
export async function rotateSigningKey(db: Kysely<DB> | Transaction<DB>): Promise<string> {
  const now = Date.now();
  const kid = await insertKey(db, now);
  await db
    .updateTable('signing_keys')
    .set({ retired_at: now })
    .where('retired_at', 'is', null)
    .where('kid', '!=', kid)
    .execute();
  return kid;
}

async function insertKey(db: Kysely<DB> | Transaction<DB>, now: number): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair(ACCESS_TOKEN_ALG, {
    crv: 'Ed25519',
    extractable: true,
  });
  const kid = randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ACCESS_TOKEN_ALG, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ACCESS_TOKEN_ALG };
  await db
    .insertInto('signing_keys')
    .values({
      kid,
      alg: ACCESS_TOKEN_ALG,
      public_jwk: JSON.stringify(publicJwk),
      private_jwk: JSON.stringify(privateJwk),
      created_at: now,
      retired_at: null,
    })
    .execute();
  return kid;
}

/** Loads the keys (creating the first one on an empty database) and keeps them fresh. */
export async function createKeyStore(db: Kysely<DB>, accessTokenTtlS: number): Promise<KeyStore> {
  let keys: LoadedKey[] = [];
  let lastMissReload = 0;

  const load = async () => {
    const cutoff = Date.now() - accessTokenTtlS * 1000 - 60_000;
    const rows = await db
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', cutoff)]))
      .orderBy('created_at', 'desc')
      .execute();
    const loaded: LoadedKey[] = [];
    for (const row of rows) {
      const publicJwk = JSON.parse(row.public_jwk) as JWK;
      loaded.push({
        kid: row.kid,
        alg: row.alg,
        publicJwk,
        publicKey: await importJWK(publicJwk, row.alg),
        privateKey: await importJWK(JSON.parse(row.private_jwk) as JWK, row.alg),
        createdAt: row.created_at,
        retiredAt: row.retired_at,
      });
    }
    keys = loaded;
  };

  await load();
  if (!keys.some((k) => k.retiredAt === null)) {
    await insertKey(db, Date.now());
    await load();
  }

  return {
    signingKey() {
      const key = keys.find((k) => k.retiredAt === null) ?? keys[0];
      if (!key) throw new Error('no signing key loaded');
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
    jwks: () => ({ keys: keys.map((k) => k.publicJwk) }),
    reload: load,
  };
}
