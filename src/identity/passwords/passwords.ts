import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Algorithm, Options } from '@node-rs/argon2';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { compare as bcryptCompare } from 'bcryptjs';

/** OWASP Password Storage Cheat Sheet, argon2id option 2: 19 MiB, 2 passes, 1 lane. */
export const ARGON2_MEMORY_COST_KIB = 19456;
export const ARGON2_TIME_COST = 2;
export const ARGON2_PARALLELISM = 1;

// `Algorithm` is an ambient const enum, which isolated modules cannot read; 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

const HASH_OPTIONS: Options = {
  algorithm: ARGON2ID,
  memoryCost: ARGON2_MEMORY_COST_KIB,
  timeCost: ARGON2_TIME_COST,
  parallelism: ARGON2_PARALLELISM,
};

// A queue that is full drains in well under a second (each slot frees every ~10-50 ms), so the
// smallest whole Retry-After is the honest one.
const RETRY_AFTER_S = 1;

// Ceilings for stored (possibly imported) hashes: a hash row must not be able to make one login
// occupy a worker for seconds or allocate hundreds of MiB. Hashes above them verify as false.
const LEGACY_ARGON2_MAX_MEMORY_KIB = 262_144;
const LEGACY_ARGON2_MAX_TIME = 16;
const LEGACY_ARGON2_MAX_PARALLELISM = 16;
const LEGACY_BCRYPT_MAX_COST = 15;
const LEGACY_SCRYPT_MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const LEGACY_SCRYPT_MAX_P = 16;
// Work, not only memory: argon2's time grows with m×t and scrypt's with its memory×p, so each
// ceiling alone still let a row ask for ~100 times a normal verification (256 MiB × 16 passes).
// 1 GiB·pass keeps libsodium's MODERATE (256 MiB, t=3) and every common framework default.
const LEGACY_ARGON2_MAX_WORK_KIB = 1_048_576;
const LEGACY_SCRYPT_MAX_WORK_BYTES = 1024 * 1024 * 1024;

/** Thrown when the hashing wait queue is full; the API maps it to 503 `unavailable` + Retry-After. */
export class HashCapacityError extends Error {
  readonly retryAfterS: number;

  constructor(retryAfterS: number) {
    super('Password hashing is at capacity; retry shortly.');
    this.name = 'HashCapacityError';
    this.retryAfterS = retryAfterS;
  }
}

export interface PasswordHasherOptions {
  /** Hash/verify operations running at once. Default: the libuv threadpool size. */
  maxConcurrent?: number;
  /** Operations allowed to wait for a slot; beyond it calls fail with HashCapacityError. Default 4x the pool size. */
  maxQueue?: number;
}

export interface PasswordHasherStats {
  running: number;
  queued: number;
  dummyVerifications: number;
  rejected: number;
  /** argon2id hashes computed (new passwords, rehashes). */
  hashes: number;
  /** Stored hashes checked with their KDF (argon2, bcrypt, scrypt); dummies are counted apart. */
  verifications: number;
}

export interface PasswordHasher {
  /** Hashes with argon2id at the exported parameters; returns a PHC string. */
  hash(password: string): Promise<string>;
  /** Checks a password against a stored argon2/bcrypt/scrypt hash; false (never a throw) on a malformed hash. */
  verify(storedHash: string, password: string): Promise<boolean>;
  /** Spends one argon2id verification on nothing, for accounts that do not exist or have no password. */
  verifyDummy(password: string): Promise<false>;
  /** True when the stored hash is not argon2id v=19 with exactly the exported parameters. */
  needsRehash(storedHash: string): boolean;
  /**
   * Runs other CPU-heavy password work under the same cap (it takes a slot, or waits, or throws
   * HashCapacityError like a hash would). Tests use it to hold a slot for as long as they need.
   */
  run<T>(task: () => Promise<T>): Promise<T>;
  stats(): PasswordHasherStats;
}

/**
 * Default concurrency: the whole libuv threadpool, since argon2 (@node-rs, napi async work) and
 * scrypt run there. Nothing is held back for other pool users: Gatehouse's are fs and dns.lookup,
 * rare and short, and at worst they wait behind one hash; reserving a thread would cost a quarter
 * of login throughput at the default pool size of 4. Raise UV_THREADPOOL_SIZE to raise both.
 * Capped at the CPUs this process may use: more hashes at once than CPUs add no throughput, only
 * 19 MiB of memory each and latency (docs/benchmarks.md: peak RSS on one CPU).
 */
export function defaultMaxConcurrent(): number {
  const size = Math.floor(Number(process.env.UV_THREADPOOL_SIZE));
  return Math.min(size >= 1 ? size : 4, availableParallelism());
}

/** libuv's pool size (UV_THREADPOOL_SIZE, else 4); the default queue is four times it, whatever the CPUs. */
export function threadpoolSize(): number {
  const size = Math.floor(Number(process.env.UV_THREADPOOL_SIZE));
  return size >= 1 ? size : 4;
}

/** Creates a hasher whose hashing work is capped at maxConcurrent with a bounded wait queue. */
export function createPasswordHasher(opts: PasswordHasherOptions = {}): PasswordHasher {
  const maxConcurrent = opts.maxConcurrent ?? defaultMaxConcurrent();
  const maxQueue = opts.maxQueue ?? 4 * threadpoolSize();
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
    throw new RangeError('maxConcurrent must be an integer >= 1');
  }
  if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError('maxQueue must be an integer >= 0');

  let running = 0;
  let dummyVerifications = 0;
  let rejected = 0;
  let hashes = 0;
  let verifications = 0;
  const waiting: Array<() => void> = [];

  async function limited<T>(task: () => Promise<T>): Promise<T> {
    if (running < maxConcurrent) {
      running++;
    } else if (waiting.length < maxQueue) {
      // The releasing task hands its slot over directly, so `running` is not touched here.
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      rejected++;
      throw new HashCapacityError(RETRY_AFTER_S);
    }
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }

  return {
    run: limited,
    hash: (password) =>
      limited(() => {
        hashes++;
        return argon2Hash(password, HASH_OPTIONS);
      }),
    verify: (storedHash, password) => {
      const check = legacyAwareCheck(storedHash);
      if (!check) return Promise.resolve(false);
      return limited(async () => {
        verifications++;
        try {
          return await check(password);
        } catch {
          return false;
        }
      });
    },
    verifyDummy: (password) =>
      limited(async () => {
        dummyVerifications++;
        try {
          await argon2Verify(await dummyHash(), password);
        } catch {
          // The outcome is discarded either way; only the time spent matters.
        }
        return false as const;
      }),
    needsRehash,
    stats: () => ({ running, queued: waiting.length, dummyVerifications, rejected, hashes, verifications }),
  };
}

let dummyHashPromise: Promise<string> | undefined;

function dummyHash(): Promise<string> {
  dummyHashPromise ??= argon2Hash(randomBytes(32), HASH_OPTIONS).catch((error: unknown) => {
    dummyHashPromise = undefined;
    throw error;
  });
  return dummyHashPromise;
}

const CURRENT_PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

function needsRehash(storedHash: string): boolean {
  const m = CURRENT_PHC.exec(storedHash);
  return (
    !m ||
    Number(m[1]) !== ARGON2_MEMORY_COST_KIB ||
    Number(m[2]) !== ARGON2_TIME_COST ||
    Number(m[3]) !== ARGON2_PARALLELISM
  );
}

type Check = (password: string) => Promise<boolean>;

/** True when verify() can check a password against this stored hash (format known, costs within the ceilings). */
export function isVerifiableHash(storedHash: string): boolean {
  return legacyAwareCheck(storedHash) !== null;
}

/**
 * Why verify() would refuse a stored hash unread, in words an operator can act on (the import's
 * per-row error), or null when it is verifiable.
 */
export function hashRefusal(storedHash: string): string | null {
  if (legacyAwareCheck(storedHash) !== null) return null;
  const a = typeof storedHash === 'string' ? ARGON2_PHC.exec(storedHash) : null;
  if (a)
    return `argon2 cost m=${a[1]},t=${a[2]},p=${a[3]} is over the limits (m ≤ ${LEGACY_ARGON2_MAX_MEMORY_KIB} KiB, t ≤ ${LEGACY_ARGON2_MAX_TIME}, p ≤ ${LEGACY_ARGON2_MAX_PARALLELISM}, m×t ≤ ${LEGACY_ARGON2_MAX_WORK_KIB})`;
  const b = typeof storedHash === 'string' ? BCRYPT.exec(storedHash) : null;
  if (b) return `bcrypt cost ${b[1]} is outside 4–${LEGACY_BCRYPT_MAX_COST}`;
  const sc = typeof storedHash === 'string' ? SCRYPT_PHC.exec(storedHash) : null;
  if (sc)
    return `scrypt cost ln=${sc[1]},r=${sc[2]},p=${sc[3]} is over the limits (128·2^ln·r ≤ ${LEGACY_SCRYPT_MAX_MEMORY_BYTES} bytes, p ≤ ${LEGACY_SCRYPT_MAX_P}, memory×p ≤ ${LEGACY_SCRYPT_MAX_WORK_BYTES} bytes) or its salt or hash is malformed`;
  return 'not a supported hash (argon2id/argon2i/argon2d PHC, bcrypt $2a/$2b/$2y, $scrypt$ln=…)';
}

const ARGON2_PHC =
  /^\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;
const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;
const SCRYPT_PHC =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/.]+={0,2})\$([A-Za-z0-9+/.]+={0,2})$/;

/** Picks the verifier for a stored hash, or null when it is malformed or over the cost ceilings. */
function legacyAwareCheck(storedHash: string): Check | null {
  if (typeof storedHash !== 'string') return null;
  const a = ARGON2_PHC.exec(storedHash);
  if (a) {
    const [m, t, p] = [Number(a[1]), Number(a[2]), Number(a[3])];
    const ok =
      m <= LEGACY_ARGON2_MAX_MEMORY_KIB &&
      t <= LEGACY_ARGON2_MAX_TIME &&
      p <= LEGACY_ARGON2_MAX_PARALLELISM &&
      m * t <= LEGACY_ARGON2_MAX_WORK_KIB;
    return ok ? (password) => argon2Verify(storedHash, password) : null;
  }
  const b = BCRYPT.exec(storedHash);
  if (b) {
    const cost = Number(b[1]);
    return cost >= 4 && cost <= LEGACY_BCRYPT_MAX_COST
      ? (password) => bcryptCompare(password, storedHash)
      : null;
  }
  const s = SCRYPT_PHC.exec(storedHash);
  if (s) return scryptCheck(Number(s[1]), Number(s[2]), Number(s[3]), s[4] ?? '', s[5] ?? '');
  return null;
}

function scryptCheck(ln: number, r: number, p: number, saltB64: string, hashB64: string): Check | null {
  const N = 2 ** ln;
  const memory = 128 * N * r;
  // passlib's "ab64" writes '.' where standard base64 has '+'; accept both.
  const salt = Buffer.from(saltB64.replaceAll('.', '+'), 'base64');
  const expected = Buffer.from(hashB64.replaceAll('.', '+'), 'base64');
  if (
    ln < 1 ||
    r < 1 ||
    p < 1 ||
    p > LEGACY_SCRYPT_MAX_P ||
    memory > LEGACY_SCRYPT_MAX_MEMORY_BYTES ||
    memory * p > LEGACY_SCRYPT_MAX_WORK_BYTES
  )
    return null;
  if (salt.length === 0 || expected.length < 16) return null;
  return (password) =>
    new Promise<boolean>((resolve, reject) => {
      const options = { N, r, p, maxmem: memory + 1024 * 1024 };
      scrypt(password, salt, expected.length, options, (error, derived) => {
        if (error) reject(error);
        else resolve(timingSafeEqual(derived, expected));
      });
    });
}
