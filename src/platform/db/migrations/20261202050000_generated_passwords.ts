import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * OWASP ASVS 5.0 6.4.1 (docs/auth.md, "First admin"): a password the service generated (the first
 * admin's, printed once at the first start) serves once: a password login with it must set a new
 * one. The row names the hash it holds for; any change of the user's password lifts it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('generated_passwords')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', bigintType(dialectOf(db)), (c) => c.notNull())
    .execute();
}

/** Drops the table again. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('generated_passwords').ifExists().execute();
}
