import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../../../platform/db/dialect.ts';
import type { DB, Role, UserStatus } from '../../../platform/db/schema.ts';
import { DAY_MS, dayOf } from './users-list.queries.ts';

// GET /api/v1/users/stats: the counters of the users_scale migration plus index ranges for the
// partial days at the windows' edges.

export interface RawStats {
  counts: Array<{ role: Role; status: UserStatus; n: number }>;
  created: [number, number, number];
  active: [number, number, number];
  /** Service accounts (docs/api.md §22), counted through their partial index. */
  services: number;
}

/** The numbers behind GET /users/stats, from the counters plus index ranges for partial days. */
export async function selectStats(
  db: Kysely<DB>,
  dialect: DialectName,
  now: number,
  windowsMs: [number, number, number],
): Promise<RawStats> {
  const cast = (e: RawBuilder<unknown>) => (dialect === 'postgres' ? sql`cast(${e} as bigint)` : e);
  const combos: Array<[Role, UserStatus]> = [];
  for (const role of ['admin', 'user'] as const) {
    for (const status of ['active', 'invited', 'disabled'] as const) combos.push([role, status]);
  }
  const columns: RawBuilder<unknown>[] = combos.map(
    ([role, status], i) =>
      sql`(select ${cast(sql`coalesce(sum(n), 0)`)} from user_counts where role = ${role} and status = ${status}) as ${sql.raw(`c${i}`)}`,
  );
  windowsMs.forEach((w, i) => {
    const lo = now - w;
    const d = dayOf(lo);
    const edge = (d + 1) * DAY_MS;
    columns.push(
      sql`(select ${cast(sql`coalesce(sum(n), 0)`)} from user_counts where day > ${d})
        + (select count(*) from users where created_at >= ${lo} and created_at < ${edge}) as ${sql.raw(`created${i}`)}`,
      sql`(select ${cast(sql`coalesce(sum(n), 0)`)} from user_login_days where day > ${d})
        + (select count(*) from users where coalesce(last_login_at, -1) >= ${lo}
             and coalesce(last_login_at, -1) < ${edge}) as ${sql.raw(`active${i}`)}`,
    );
  });
  columns.push(sql`(select count(*) from users where kind = 'service') as services`);
  const result = await sql<Record<string, number | string>>`select ${sql.join(columns, sql`, `)}`.execute(db);
  const row = result.rows[0] ?? {};
  const num = (k: string) => Number(row[k] ?? 0);
  return {
    counts: combos.map(([role, status], i) => ({ role, status, n: num(`c${i}`) })),
    created: [num('created0'), num('created1'), num('created2')],
    active: [num('active0'), num('active1'), num('active2')],
    services: num('services'),
  };
}
