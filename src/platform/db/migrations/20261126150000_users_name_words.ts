import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.ts';

/*
 * PostgreSQL: the name words of every user, one row per word start (docs/users.md, Search).
 * A search's tier 1 holds the users whose lower-cased name has the query at a word start (the start
 * of the name, or after a space or a hyphen). Each row here is the lower-cased name from one word
 * start to its end, so those users are one range of user_name_words_word_idx (`word` in "C" order,
 * prefix = the query), read on the index alone: it carries the email (the result order) and the
 * role and status (the search filters). A query too common for the email walk but whose tier-1
 * users sit far along the email order (`mary-jan`) is then a range read and a sort of a few
 * thousand index entries instead of a walk of tens of thousands of users
 * (src/modules/users/search/users-search-pg.queries.ts).
 * Words keep their first WORD_CHARS characters: a query is at most that long (users.schemas.ts), so
 * the prefix test stays exact. Triggers keep the rows in step with every writer of users, in the
 * same transaction; the foreign key carries email changes and deletes.
 * SQLite needs nothing: its FTS5 table already indexes word starts (`"\u0002q"`, `" q"`, `"-q"`),
 * and its email walk costs about a tenth of PostgreSQL's per entry (docs/benchmarks.md).
 */

/** Characters of each word start kept: the longest search query (users.schemas.ts). */
export const WORD_CHARS = 100;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  // Keyed by the email (the order the search reads): a changed email moves with the user, a
  // deleted user takes its words along, through the foreign key.
  await sql`create table user_name_words (
      email text not null references users (email) on update cascade on delete cascade,
      word text collate "C" not null,
      role text not null,
      status text not null
    )`.execute(db);
  // Every suffix of lower(name) that starts a word, cut to WORD_CHARS. lower() here is the same
  // function on the same collation as the search's exact test (`lower(name)`).
  await sql`create function gh_name_words(name text) returns setof text
    language sql immutable strict parallel safe as $$
      select distinct left(substr(n, i), ${sql.lit(WORD_CHARS)}) from (select lower(name) as n) s,
        generate_series(1, length(n)) i
      where i = 1 or substr(n, i - 1, 1) in (' ', '-')
    $$`.execute(db);
  // A bulk insert (the seeder, an import) adds its rows in one statement: a statement trigger.
  await sql`create function gatehouse_user_name_words_ai() returns trigger language plpgsql as $$
    begin
      insert into user_name_words (email, word, role, status)
        select u.email, w, u.role, u.status from new_users u, gh_name_words(u.name) w;
      return null;
    end $$`.execute(db);
  await sql`create trigger users_name_words_ai after insert on users referencing new table as new_users
    for each statement execute function gatehouse_user_name_words_ai()`.execute(db);
  // PostgreSQL allows no transition table beside a column list: updates are per row. The foreign
  // key may or may not have moved the rows to the new email yet (when both change): both go.
  await sql`create function gatehouse_user_name_words_au() returns trigger language plpgsql as $$
    begin
      delete from user_name_words where email in (old.email, new.email);
      insert into user_name_words (email, word, role, status)
        select new.email, w, new.role, new.status from gh_name_words(new.name) w;
      return null;
    end $$`.execute(db);
  await sql`create trigger users_name_words_au after update of name, role, status on users
    for each row when ((old.name, old.role, old.status) is distinct from (new.name, new.role, new.status))
    execute function gatehouse_user_name_words_au()`.execute(db);
  // Rows for the users that already exist (an upgrade of a populated database).
  await sql`insert into user_name_words (email, word, role, status)
    select u.email, w, u.role, u.status from users u, gh_name_words(u.name) w`.execute(db);
  await sql`create index user_name_words_word_idx on user_name_words (word)
    include (email, role, status)`.execute(db);
  await sql`create index user_name_words_email_idx on user_name_words (email)`.execute(db);
  await sql`analyze user_name_words`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`drop trigger if exists users_name_words_au on users`.execute(db);
  await sql`drop trigger if exists users_name_words_ai on users`.execute(db);
  await sql`drop function if exists gatehouse_user_name_words_au()`.execute(db);
  await sql`drop function if exists gatehouse_user_name_words_ai()`.execute(db);
  await sql`drop table if exists user_name_words`.execute(db);
  await sql`drop function if exists gh_name_words(text)`.execute(db);
}
