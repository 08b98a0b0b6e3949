import type { Db } from '../../platform/db/schema.ts';

/** Marks the user's current password as generated: it serves once (docs/auth.md, "First admin"). */
export async function insertGeneratedPassword(
  db: Db,
  row: { user_id: string; password_hash: string; created_at: number },
): Promise<void> {
  await db.insertInto('generated_passwords').values(row).execute();
}

/** Whether this hash is the user's generated password (a changed password no longer matches). */
export async function isGeneratedPassword(db: Db, userId: string, passwordHash: string): Promise<boolean> {
  const row = await db
    .selectFrom('generated_passwords')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('password_hash', '=', passwordHash)
    .executeTakeFirst();
  return row !== undefined;
}

/** Lifts the mark (the password was replaced). */
export async function deleteGeneratedPassword(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('generated_passwords').where('user_id', '=', userId).execute();
}
