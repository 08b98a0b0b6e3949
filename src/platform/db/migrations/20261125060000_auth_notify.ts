import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.ts';

/**
 * PostgreSQL: every change to a user or session row announces the user's id on the
 * `gatehouse_auth` channel (a truncate announces `*`), whatever code path wrote it, so every
 * instance drops its cached copy (src/identity/tokens/session-cache.ts). NOTIFY is delivered on commit
 * only, and PostgreSQL folds repeats of one payload within a transaction. SQLite: nothing (the
 * cache is not used there).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`
    create function gatehouse_auth_notify() returns trigger language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('gatehouse_auth', '*');
      elsif tg_table_name = 'users' then
        perform pg_notify('gatehouse_auth', old.id);
      else
        perform pg_notify('gatehouse_auth', old.user_id);
      end if;
      return null;
    end $$`.execute(db);
  for (const table of ['users', 'sessions']) {
    await sql`create trigger ${sql.raw(`${table}_auth_notify`)} after update or delete on ${sql.table(table)}
      for each row execute function gatehouse_auth_notify()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_auth_notify_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function gatehouse_auth_notify()`.execute(db);
  }
}

/** Drops the triggers and their function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  for (const table of ['users', 'sessions']) {
    await sql`drop trigger if exists ${sql.raw(`${table}_auth_notify`)} on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists ${sql.raw(`${table}_auth_notify_truncate`)} on ${sql.table(table)}`.execute(
      db,
    );
  }
  await sql`drop function if exists gatehouse_auth_notify()`.execute(db);
}
