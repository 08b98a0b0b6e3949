import type { Kysely } from 'kysely';

/*
 * docs/api.md §23: an organization's `sso_required` (0/1). While 1, every other sign-in method for an
 * address at the organization's domains answers 403 `sso_required` (admins excepted). 0 for every
 * existing row: nothing changes until an admin sets it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('organizations')
    .addColumn('sso_required', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Drops the column again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('sso_required').execute();
}
