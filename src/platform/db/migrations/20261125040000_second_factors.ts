import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * Second factors (docs/api.md §13): a TOTP factor per user (its secret encrypted), recovery codes
 * (hashed), passkeys, the short-lived `mfa_token`s of a half-finished sign-in, and WebAuthn
 * challenges (in the database so any instance can answer the second step).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('mfa_totp')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    // AES-256-GCM box of the 20-byte secret (src/security/secrets-box.ts).
    .addColumn('secret_box', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    // Null while pending; a pending secret dies at pending_expires_at.
    .addColumn('confirmed_at', ts)
    .addColumn('pending_expires_at', ts)
    // The last accepted time step (replay guard: only a later step is accepted).
    .addColumn('last_step', ts, (c) => c.notNull().defaultTo(-1))
    .execute();
  await db.schema
    .createTable('mfa_recovery_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema
    .createIndex('mfa_recovery_codes_user_idx')
    .on('mfa_recovery_codes')
    .columns(['user_id', 'code_hash'])
    .execute();
  await db.schema
    .createTable('mfa_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The first factor's amr value (`pwd`, `fed`), kept for the session the second factor opens.
    .addColumn('first_factor', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('tries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('used_at', ts)
    .execute();
  await db.schema.createIndex('mfa_tokens_expires_idx').on('mfa_tokens').column('expires_at').execute();
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', ts, (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('backed_up', 'integer', (c) => c.notNull())
    .addColumn('device_type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('last_used_at', ts)
    .execute();
  await db.schema.createIndex('passkeys_user_idx').on('passkeys').column('user_id').execute();
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    // The user registering, or the user an mfa_token / reset link names; null for discoverable sign-in.
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema
    .createIndex('webauthn_challenges_expires_idx')
    .on('webauthn_challenges')
    .column('expires_at')
    .execute();
}

/** Drops the second-factor tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webauthn_challenges', 'passkeys', 'mfa_tokens', 'mfa_recovery_codes', 'mfa_totp']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
