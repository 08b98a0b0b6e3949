import { type Kysely, sql } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

const PURPOSES_BEFORE = `'password_reset', 'email_verify', 'email_change'`;
const PURPOSES = `'password_reset', 'email_verify', 'email_change', 'email_signin'`;

/**
 * Sign-in by e-mail (docs/api.md §20) keeps its pair in the one table of mailed one-time links: a
 * row of purpose `email_signin` holds the link's token hash as every link does, and also the code's
 * keyed hash (`code_hash`, HMAC under SECRETS_KEY) and its tries (`code_tries`). One row for both
 * halves: using, replacing or ending the row (a credential event, src/identity/links/credential-events.ts)
 * kills the link and the code together. The purpose CHECK gains `email_signin`; SQLite cannot alter
 * a CHECK, so there the table is rebuilt (nothing references it), on PostgreSQL the constraint is
 * replaced.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const dialect = dialectOf(db);
  if (dialect === 'postgres') {
    await sql`alter table one_time_links drop constraint if exists one_time_links_purpose_check`.execute(db);
    await sql
      .raw(
        `alter table one_time_links add constraint one_time_links_purpose_check check (purpose in (${PURPOSES}))`,
      )
      .execute(db);
    await db.schema.alterTable('one_time_links').addColumn('code_hash', 'text').execute();
    await db.schema
      .alterTable('one_time_links')
      .addColumn('code_tries', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    return;
  }
  await rebuild(db, PURPOSES, true);
}

/** Back to the three purposes: sign-in rows are deleted (they are short-lived by design). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from one_time_links where purpose = 'email_signin'`.execute(db);
  if (dialectOf(db) === 'postgres') {
    await sql`alter table one_time_links drop constraint if exists one_time_links_purpose_check`.execute(db);
    await sql
      .raw(
        `alter table one_time_links add constraint one_time_links_purpose_check check (purpose in (${PURPOSES_BEFORE}))`,
      )
      .execute(db);
    await db.schema.alterTable('one_time_links').dropColumn('code_hash').execute();
    await db.schema.alterTable('one_time_links').dropColumn('code_tries').execute();
    return;
  }
  await rebuild(db, PURPOSES_BEFORE, false);
}

/** SQLite: a new table with the wanted CHECK (and code columns), the rows copied, then swapped in. */
async function rebuild(db: Kysely<unknown>, purposes: string, withCode: boolean): Promise<void> {
  const ts = bigintType('sqlite');
  let table = db.schema
    .createTable('one_time_links_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql.raw(`purpose in (${purposes})`)))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .addColumn('replaced_at', ts);
  if (withCode) {
    table = table
      .addColumn('code_hash', 'text')
      .addColumn('code_tries', 'integer', (c) => c.notNull().defaultTo(0));
  }
  await table.execute();
  const columns = 'id, user_id, purpose, token_hash, email, created_at, expires_at, used_at, replaced_at';
  await sql
    .raw(`insert into one_time_links_next (${columns}) select ${columns} from one_time_links`)
    .execute(db);
  await db.schema.dropTable('one_time_links').execute();
  await sql`alter table one_time_links_next rename to one_time_links`.execute(db);
  await db.schema
    .createIndex('one_time_links_user_idx')
    .on('one_time_links')
    .columns(['user_id', 'purpose'])
    .execute();
}
