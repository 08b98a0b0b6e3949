import type { Kysely } from 'kysely';
import { bigintType, dialectOf } from '../dialect.ts';

/**
 * External sign-in providers (docs/api.md §18): `idp_providers` holds the named providers an admin
 * manages (secrets sealed with SECRETS_KEY, never plain); `idp_flows` holds each browser flow's
 * server-side half — the redirect's state, nonce, PKCE verifier (sealed) and return_to, keyed by the
 * hash of the browser's cookie, single use, 10 minutes — and the pending second-factor step of a
 * provider sign-in (the sealed mfa_token), keyed the same way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ts = bigintType(dialectOf(db));
  await db.schema
    .createTable('idp_providers')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('preset', 'text')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret_box', 'text')
    .addColumn('private_key_box', 'text')
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('auto_provision', 'integer', (c) => c.notNull())
    .addColumn('link_by_email', 'integer', (c) => c.notNull())
    .addColumn('link_admins', 'integer', (c) => c.notNull())
    .addColumn('allowed_domains', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('idp_flows')
    .addColumn('browser_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('verifier_box', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idp_flows_expires_idx').on('idp_flows').column('expires_at').execute();
}

/** Drops both tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idp_flows').ifExists().execute();
  await db.schema.dropTable('idp_providers').ifExists().execute();
}
