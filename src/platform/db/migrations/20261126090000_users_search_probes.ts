import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.ts';

/*
 * PostgreSQL indexes for three slow cases at a million users (docs/benchmarks.md, Users at scale).
 * A search for a whole e-mail address becomes index probes
 * (src/modules/users/search/users-search-pg.queries.ts):
 * - the reversed local part of the email ("C" order on PostgreSQL): the emails whose local part
 *   ends with the query's, a range; it carries the email so the domain is checked on the entry;
 * - a partial index of the (few) users whose name holds an '@': the only names such a query can
 *   match.
 * A name-sorted list with a created_after bound reads the unnamed users in the range by created_at
 * (users_unnamed_created_idx) instead of walking past all of them (users-list.queries.ts).
 * SQLite has no reverse(): its email index is keyed by the local part's last 6 characters (one of
 * the EMAIL_TAILS of users-search-sqlite.queries.ts; migration 20261126170000 adds 3), the '@' and
 * the domain; it has the same partial index of names. It keeps the plain walk for the unnamed users
 * (a tenth of PostgreSQL's cost per entry).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') {
    await sql`create index users_email_tail_idx
      on users (substr(email, max(instr(email, '@') - 6, 1)))`.execute(db);
    await sql`create index users_name_at_idx on users (id, name) where instr(name, '@') > 0`.execute(db);
    return;
  }
  await sql`create index users_email_local_rev_idx
    on users ((reverse(split_part(email, '@', 1)) collate "C")) include (email)`.execute(db);
  await sql`create index users_name_at_idx on users (id) include (name)
    where strpos(name, '@') > 0`.execute(db);
  await sql`create index users_unnamed_created_idx on users (created_at, id) include (role, status)
    where name = ''`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') {
    await sql`drop index if exists users_name_at_idx`.execute(db);
    await sql`drop index if exists users_email_tail_idx`.execute(db);
    return;
  }
  await sql`drop index if exists users_unnamed_created_idx`.execute(db);
  await sql`drop index if exists users_name_at_idx`.execute(db);
  await sql`drop index if exists users_email_local_rev_idx`.execute(db);
}
