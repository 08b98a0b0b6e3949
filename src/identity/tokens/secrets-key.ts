import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.ts';
import type { Database } from '../../platform/db/database.ts';

/**
 * The key that seals second-factor secrets at rest (AES-256-GCM) and keys the recovery-code hashes.
 * SECRETS_KEY when set. Without it: on SQLite a key generated once into `<database>.secrets-key`
 * (mode 0600) beside the database file, with a warning at start (a single instance owns that file
 * anyway); an in-memory SQLite database gets a key for the life of the process. On PostgreSQL several
 * instances must share one key, so there is none and `mfa` may not be enabled (docs/mfa.md).
 */
export interface SecretsKey {
  /** Encrypts with a fresh IV; `context` (e.g. the user id) is bound as associated data. */
  seal(plain: Uint8Array, context: string): string;
  /** Decrypts a box sealed for the same context; null when it was tampered with or sealed under another key. */
  open(box: string, context: string): Buffer | null;
  /** A keyed hash (HMAC-SHA-256), so a dump of hashes of low-entropy codes cannot be searched offline. */
  hash(value: string): string;
}

/** The context's way to the key (`ctx.secrets`): read or made on first use, then kept for the app's life. */
export interface SecretsKeySource {
  /** The key, or null when none can be had (PostgreSQL without SECRETS_KEY). */
  key(): SecretsKey | null;
}

interface KeyInputs {
  readonly config: Config;
  readonly database: Database;
  readonly log: Logger;
}

/**
 * Made once per context by createContext. Lazy on purpose: the key file is written, and its warning
 * logged, only when a feature seals or opens a secret, not by every start of an app that needs none.
 */
export function createSecretsKeySource(inputs: KeyInputs): SecretsKeySource {
  let resolved: { key: SecretsKey | null } | null = null;
  return {
    key() {
      if (resolved === null) {
        const raw = resolveKey(inputs);
        resolved = { key: raw === null ? null : createSecretsKey(raw) };
      }
      return resolved.key;
    },
  };
}

function resolveKey({ config, database, log }: KeyInputs): Buffer | null {
  if (config.secretsKey !== null) return Buffer.from(config.secretsKey, 'base64');
  if (database.dialect !== 'sqlite') return null;
  const path = config.databaseUrl.slice('sqlite:'.length);
  if (path === ':memory:' || path === '') {
    log.warn(
      'SECRETS_KEY is not set: second-factor secrets of this in-memory database use a key that dies with the process',
    );
    return randomBytes(32);
  }
  const file = `${path}.secrets-key`;
  if (!existsSync(file)) {
    // `wx`: of two processes racing to create it, one writes and the other reads what was written.
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(file, 0o600);
  log.warn(
    { file },
    'SECRETS_KEY is not set: second-factor secrets are sealed with a key generated beside the database; back it up with the database, or set SECRETS_KEY',
  );
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}

/** Builds seal/open/hash over a 32-byte key; the cipher and MAC keys are derived apart. */
export function createSecretsKey(raw: Buffer): SecretsKey {
  // A KeyObject made once: given a Buffer, every cipher would import the key anew.
  const encKey = createSecretKey(
    createHmac('sha256', raw).update('gatehouse secrets v1 encryption').digest(),
  );
  const macKey = createHmac('sha256', raw).update('gatehouse secrets v1 hashing').digest();
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encKey, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(box, context) {
      const [version, ivText, bodyText] = box.split('.');
      if (version !== 'v1' || !ivText || !bodyText) return null;
      const body = Buffer.from(bodyText, 'base64url');
      if (body.length < 16) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(ivText, 'base64url'));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(body.subarray(body.length - 16));
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
      } catch {
        return null;
      }
    },
    hash(value) {
      return createHmac('sha256', macKey).update(value).digest('base64url');
    },
  };
}
