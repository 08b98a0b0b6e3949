import type { Kysely, Transaction } from 'kysely';
import type { DB, MfaTotpTable } from '../../platform/db/schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The user's TOTP row (pending or confirmed), or undefined. */
export async function findTotp(db: Db, userId: string): Promise<MfaTotpTable | undefined> {
  return db.selectFrom('mfa_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** Stores a pending secret, replacing a pending one; never touches a confirmed factor (returns false then). */
export async function upsertPendingTotp(db: Db, row: MfaTotpTable): Promise<boolean> {
  const result = await db
    .insertInto('mfa_totp')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({
          secret_box: row.secret_box,
          created_at: row.created_at,
          pending_expires_at: row.pending_expires_at,
          last_step: -1,
        })
        .where('mfa_totp.confirmed_at', 'is', null),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Confirms a live pending secret and records its accepted step, in one conditional write. */
export async function confirmTotp(db: Db, userId: string, step: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_totp')
    .set({ confirmed_at: now, pending_expires_at: null, last_step: step })
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is', null)
    .where('pending_expires_at', '>', now)
    .where('last_step', '<', step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The replay guard (RFC 6238 §5.2): records `step` as accepted only when it is later than the last
 * accepted step. One compare-and-set: of two requests with the same code, exactly one wins.
 */
export async function acceptTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_totp')
    .set({ last_step: step })
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null)
    .where('last_step', '<', step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removes the user's TOTP factor (pending or confirmed); returns whether one was confirmed. */
export async function deleteTotp(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .deleteFrom('mfa_totp')
    .where('user_id', '=', userId)
    .returning('confirmed_at')
    .executeTakeFirst();
  return row !== undefined && row.confirmed_at !== null;
}

/** How many unused recovery codes the user holds. */
export async function countRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('mfa_recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Replaces the user's recovery codes with new hashes (the old set dies). */
export async function replaceRecoveryCodes(
  db: Db,
  userId: string,
  rows: Array<{ id: string; code_hash: string }>,
  now: number,
): Promise<void> {
  await deleteRecoveryCodes(db, userId);
  await db
    .insertInto('mfa_recovery_codes')
    .values(rows.map((r) => ({ ...r, user_id: userId, created_at: now, used_at: null })))
    .execute();
}

/** Deletes every recovery code of the user. */
export async function deleteRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
}

/** Consumes one unused code by one conditional write: concurrently, exactly one caller gets true. */
export async function consumeRecoveryCode(
  db: Db,
  userId: string,
  codeHash: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes tokens and challenges past their end (housekeeping). */
export async function deleteExpiredMfaState(db: Db, before: number): Promise<void> {
  await db.deleteFrom('mfa_tokens').where('expires_at', '<', before).execute();
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<', before).execute();
  await db
    .deleteFrom('mfa_totp')
    .where('confirmed_at', 'is', null)
    .where('pending_expires_at', '<', before)
    .execute();
}

/** How many passkeys the user has. */
export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes every passkey of the user; returns how many. */
export async function deleteUserPasskeys(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
