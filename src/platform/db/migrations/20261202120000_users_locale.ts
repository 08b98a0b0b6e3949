import type { Kysely } from 'kysely';

/*
 * A user's language (docs/api.md §24, docs/languages.md): a canonical BCP 47 tag or null. The pages
 * show it after sign-in (the picker's cookie is set to it) and the mails to the user are written in
 * it. Null for every existing row: their pages and mails keep following the request or DEFAULT_LOCALE.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('locale', 'text').execute();
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('locale').execute();
}
