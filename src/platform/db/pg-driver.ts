import pg from 'pg';

// int8 (bigint, count(*)) as numbers: every value Gatehouse stores fits in 2^53 (epoch ms, counts).
pg.types.setTypeParser(20, (v) => Number(v));

/** The `pg` module, with Gatehouse's type parsers set. */
export function pgDriver(): typeof pg {
  return pg;
}
