import type { Db } from '../../platform/db/schema.ts';

/** Stores a new password hash. */
export async function setPasswordHash(db: Db, userId: string, hash: string, at: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: hash, updated_at: at })
    .where('id', '=', userId)
    .execute();
}
