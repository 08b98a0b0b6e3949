import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect.ts';

/*
 * SQLite only: a second key for a search by e-mail address whose local part has 3 to 5 characters
 * (`ahart@wayne-enterprises.com`), which users_email_tail_idx (the local part's last 6 characters)
 * cannot serve as a range: the email's local part's last 3 characters, the '@' and the domain
 * (src/modules/users/search/users-search-sqlite.queries.ts, EMAIL_TAILS). PostgreSQL's reversed local
 * part already serves every length.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`create index users_email_tail3_idx
    on users (substr(email, max(instr(email, '@') - 3, 1)))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`drop index if exists users_email_tail3_idx`.execute(db);
}
