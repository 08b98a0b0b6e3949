import { createRequire } from 'node:module';
import type pg from 'pg';

let driver: typeof pg | undefined;

/**
 * The `pg` module, loaded on first use: only PostgreSQL URLs need it, and a SQLite deployment
 * would otherwise carry it (with pg-types, pg-protocol, pg-pool) all its life: ~1 MB of heap
 * (docs/benchmarks.md, peak memory).
 */
export function pgDriver(): typeof pg {
  if (!driver) {
    driver = createRequire(import.meta.url)('pg') as typeof pg;
    // int8 (bigint, count(*)) as numbers: every value Gatehouse stores fits in 2^53 (epoch ms, counts).
    driver.types.setTypeParser(20, (v) => Number(v));
  }
  return driver;
}
