import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { bigintType, type DialectName, dialectOf } from '../dialect.ts';

/*
 * What keeps user listing, search and statistics fast at a million users (docs/users.md):
 * - one index per list sort, shaped like its keyset (sort key, id);
 * - per-day counters kept in step by triggers, so totals and statistics sum a few thousand rows
 *   instead of counting a million;
 * - a substring index: an FTS5 trigram table on SQLite, pg_trgm GIN indexes on PostgreSQL;
 * - the key that signs pagination cursors.
 * Triggers (not application code) maintain counters and the search index, so every writer of the
 * users table — other modules, the CLI, the seeder — keeps them right, in the same transaction.
 */

/** The text whose short substrings PostgreSQL indexes (users_short_grams_idx); queries repeat it. */
export const SHORT_GRAMS_SOURCE = "email || ' ' || lower(name)";

/** Day number of an epoch-millisecond column: integer division on both engines. */
const DAY_MS = 86_400_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  const dialect = dialectOf(db);
  const ts = bigintType(dialect);

  await db.schema
    .createTable('app_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db
    .insertInto('app_secrets' as never)
    .values({
      name: 'cursor_key',
      value: randomBytes(32).toString('base64url'),
      created_at: Date.now(),
    } as never)
    .execute();

  await db.schema
    .createTable('user_counts')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('day', ts, (c) => c.notNull())
    .addColumn('n', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('user_counts_pkey', ['role', 'status', 'day'])
    .execute();
  await db.schema
    .createTable('user_login_days')
    .addColumn('day', ts, (c) => c.primaryKey())
    .addColumn('n', ts, (c) => c.notNull())
    .execute();

  for (const statement of dialect === 'postgres' ? postgresUp() : sqliteUp()) {
    await sql.raw(statement).execute(db);
  }
  // Counters for rows that already exist (an upgrade of a populated database).
  for (const statement of counterBackfill()) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const dialect = dialectOf(db);
  for (const statement of dialect === 'postgres' ? postgresDown() : sqliteDown()) {
    await sql.raw(statement).execute(db);
  }
  await db.schema.dropTable('user_login_days').ifExists().execute();
  await db.schema.dropTable('user_counts').ifExists().execute();
  await db.schema.dropTable('app_secrets').ifExists().execute();
}

/**
 * One index per list sort, shaped like its keyset (key, id), carrying role, status and created_at
 * so a filtered walk tests the filters on the index entry without reading the row (SQLite defers
 * the row lookup; PostgreSQL answers from the index alone). The email index also carries the name,
 * for search walks in email order. Binary ("C") order on PostgreSQL whatever the database's
 * collation, so both engines sort alike; lower() under "C" folds ASCII only, like SQLite's lower().
 */
export function sortIndexes(dialect: DialectName): string[] {
  if (dialect === 'postgres') {
    return [
      'drop index users_created_at_idx',
      'create index users_created_at_idx on users (created_at, id) include (role, status)',
      'create index users_email_c_idx on users (email collate "C") include (name, role, status, created_at)',
      'create index users_name_idx on users ((lower(name collate "C")), id) include (role, status, created_at)',
      // Never-logged-in users sort as the oldest logins (docs/users.md).
      // last_login_at itself is included too: PostgreSQL answers from an expression index alone
      // only when the expression's columns are in it (the stats' login counts need that).
      `create index users_last_login_idx on users ((coalesce(last_login_at, -1)), id)
         include (role, status, created_at, last_login_at)`,
      'create index users_role_status_idx on users (role, status, created_at)',
    ];
  }
  return [
    'drop index users_created_at_idx',
    'create index users_created_at_idx on users (created_at, id, role, status)',
    'create index users_email_walk_idx on users (email, name, role, status, created_at)',
    'create index users_name_idx on users (lower(name), id, role, status, created_at)',
    'create index users_last_login_idx on users (coalesce(last_login_at, -1), id, role, status, created_at)',
    'create index users_role_status_idx on users (role, status, created_at)',
  ];
}

function sqliteUp(): string[] {
  return [
    ...sortIndexes('sqlite'),
    `create trigger users_counts_ai after insert on users begin
       insert into user_counts (role, status, day, n) values (new.role, new.status, new.created_at / ${DAY_MS}, 1)
         on conflict (role, status, day) do update set n = n + 1;
       insert into user_login_days (day, n) select new.last_login_at / ${DAY_MS}, 1 where new.last_login_at is not null
         on conflict (day) do update set n = n + 1;
     end`,
    `create trigger users_counts_ad after delete on users begin
       update user_counts set n = n - 1
         where role = old.role and status = old.status and day = old.created_at / ${DAY_MS};
       update user_login_days set n = n - 1 where day = old.last_login_at / ${DAY_MS};
     end`,
    `create trigger users_counts_au after update of role, status, created_at on users
     when old.role is not new.role or old.status is not new.status
       or old.created_at / ${DAY_MS} is not new.created_at / ${DAY_MS}
     begin
       update user_counts set n = n - 1
         where role = old.role and status = old.status and day = old.created_at / ${DAY_MS};
       insert into user_counts (role, status, day, n) values (new.role, new.status, new.created_at / ${DAY_MS}, 1)
         on conflict (role, status, day) do update set n = n + 1;
     end`,
    `create trigger users_logins_au after update of last_login_at on users
     when old.last_login_at / ${DAY_MS} is not new.last_login_at / ${DAY_MS}
     begin
       update user_login_days set n = n - 1 where day = old.last_login_at / ${DAY_MS};
       insert into user_login_days (day, n) select new.last_login_at / ${DAY_MS}, 1 where new.last_login_at is not null
         on conflict (day) do update set n = n + 1;
     end`,
    // The trigram index. users has a text primary key and its implicit rowid may change on VACUUM,
    // so the FTS rows are keyed by a rowid of their own, mapped to users.id.
    `create table users_search_rowids (
       rowid integer primary key,
       user_id text not null unique
     )`,
    // e: email, n: name. Each value ends with two U+0001 so that every one- and two-character
    // substring starts some trigram: that is how queries shorter than three characters use the
    // index (through the vocabulary of trigrams). The name starts with U+0002, so a word prefix is
    // a phrase of at least three characters even for a two-character query: "\u0002q", " q", "-q".
    `create virtual table users_fts using fts5 (
       e, n, content = '', contentless_delete = 1, tokenize = 'trigram'
     )`,
    `create virtual table users_fts_terms using fts5vocab (users_fts, 'row')`,
    `create trigger users_search_ai after insert on users begin
       insert into users_search_rowids (user_id) values (new.id);
       insert into users_fts (rowid, e, n) values (last_insert_rowid(), ${ftsValues('new')});
     end`,
    `create trigger users_search_au after update of email, name on users
     when old.email is not new.email or old.name is not new.name
     begin
       delete from users_fts where rowid = (select rowid from users_search_rowids where user_id = old.id);
       insert into users_fts (rowid, e, n)
         select rowid, ${ftsValues('new')} from users_search_rowids where user_id = new.id;
     end`,
    `create trigger users_search_ad after delete on users begin
       delete from users_fts where rowid = (select rowid from users_search_rowids where user_id = old.id);
       delete from users_search_rowids where user_id = old.id;
     end`,
    // Rows that already exist.
    'insert into users_search_rowids (user_id) select id from users order by created_at, id',
    `insert into users_fts (rowid, e, n)
       select m.rowid, ${ftsValues('u')} from users_search_rowids m join users u on u.id = m.user_id`,
  ];
}

/** The FTS document of a user row (see users_fts). */
export function ftsValues(row: string): string {
  const end = 'char(1, 1)';
  return `${row}.email || ${end}, char(2) || ${row}.name || ${end}`;
}

function sqliteDown(): string[] {
  return [
    'drop trigger if exists users_search_ad',
    'drop trigger if exists users_search_au',
    'drop trigger if exists users_search_ai',
    'drop table if exists users_fts_terms',
    'drop table if exists users_fts',
    'drop table if exists users_search_rowids',
    'drop trigger if exists users_logins_au',
    'drop trigger if exists users_counts_au',
    'drop trigger if exists users_counts_ad',
    'drop trigger if exists users_counts_ai',
    ...dropSortIndexes(),
  ];
}

function postgresUp(): string[] {
  return [
    ...sortIndexes('postgres'),
    // Each change touches at most two counter rows; taking them in key order keeps two concurrent
    // changes from deadlocking on each other.
    `create function gatehouse_user_counts() returns trigger language plpgsql as $$
     declare
       old_day bigint; new_day bigint;
     begin
       if tg_op in ('UPDATE', 'DELETE') then old_day := old.created_at / ${DAY_MS}; end if;
       if tg_op in ('UPDATE', 'INSERT') then new_day := new.created_at / ${DAY_MS}; end if;
       if tg_op = 'UPDATE' and old.role = new.role and old.status = new.status and old_day = new_day then
         null;
       elsif tg_op = 'UPDATE' and (old.role, old.status, old_day) > (new.role, new.status, new_day) then
         perform gatehouse_bump_count(new.role, new.status, new_day, 1);
         perform gatehouse_bump_count(old.role, old.status, old_day, -1);
       else
         if tg_op <> 'INSERT' then perform gatehouse_bump_count(old.role, old.status, old_day, -1); end if;
         if tg_op <> 'DELETE' then perform gatehouse_bump_count(new.role, new.status, new_day, 1); end if;
       end if;

       if tg_op in ('UPDATE', 'DELETE') then old_day := old.last_login_at / ${DAY_MS}; else old_day := null; end if;
       if tg_op in ('UPDATE', 'INSERT') then new_day := new.last_login_at / ${DAY_MS}; else new_day := null; end if;
       if old_day is distinct from new_day then
         if old_day is not null and (new_day is null or old_day < new_day) then
           update user_login_days set n = n - 1 where day = old_day;
           old_day := null;
         end if;
         if new_day is not null then
           insert into user_login_days (day, n) values (new_day, 1)
             on conflict (day) do update set n = user_login_days.n + 1;
         end if;
         if old_day is not null then update user_login_days set n = n - 1 where day = old_day; end if;
       end if;
       return null;
     end $$`,
    `create function gatehouse_bump_count(r text, s text, d bigint, delta bigint) returns void
     language sql as $$
       insert into user_counts (role, status, day, n) values (r, s, d, delta)
         on conflict (role, status, day) do update set n = user_counts.n + excluded.n
     $$`,
    `create trigger users_counts after insert or delete or update of role, status, created_at, last_login_at
       on users for each row execute function gatehouse_user_counts()`,
    'create extension if not exists pg_trgm',
    'create index users_email_trgm_idx on users using gin (email gin_trgm_ops)',
    'create index users_name_trgm_idx on users using gin (lower(name) gin_trgm_ops)',
    // pg_trgm cannot serve one- and two-character substrings; this array of every one- and
    // two-character substring can (GIN, `@>`), so a rare short query is a lookup, not a scan.
    `create function gh_short_grams(t text) returns text[] language sql immutable strict parallel safe as $$
       select coalesce(array_agg(distinct g), '{}') from (
         select substr(t, i, 1) as g from generate_series(1, length(t)) i
         union all
         select substr(t, i, 2) from generate_series(1, length(t) - 1) i
       ) s
     $$`,
    `create index users_short_grams_idx on users using gin ((gh_short_grams(${SHORT_GRAMS_SOURCE})))`,
  ];
}

function postgresDown(): string[] {
  return [
    'drop index if exists users_short_grams_idx',
    'drop function if exists gh_short_grams(text)',
    'drop index if exists users_name_trgm_idx',
    'drop index if exists users_email_trgm_idx',
    'drop trigger if exists users_counts on users',
    'drop function if exists gatehouse_user_counts()',
    'drop function if exists gatehouse_bump_count(text, text, bigint, bigint)',
    ...dropSortIndexes(),
  ];
}

function dropSortIndexes(): string[] {
  return [
    'drop index if exists users_role_status_idx',
    'drop index if exists users_last_login_idx',
    'drop index if exists users_name_idx',
    'drop index if exists users_email_walk_idx',
    'drop index if exists users_email_c_idx',
    'drop index if exists users_created_at_idx',
    // The core migration's own index.
    'create index users_created_at_idx on users (created_at, id)',
  ];
}

function counterBackfill(): string[] {
  return [
    `insert into user_counts (role, status, day, n)
       select role, status, created_at / ${DAY_MS}, count(*) from users group by 1, 2, 3`,
    `insert into user_login_days (day, n)
       select last_login_at / ${DAY_MS}, count(*) from users where last_login_at is not null group by 1`,
  ];
}
