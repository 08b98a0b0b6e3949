import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKeyStore, rotateSigningKey } from '../../src/identity/tokens/signing-keys.ts';
import { type Database, openDatabase } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';

/*
 * resource-token-outlives-its-retired-key: a retired signing key left the JWKS one access-token
 * lifetime (plus a minute) after its retirement, but a token for an API may live up to a day
 * (docs/api.md §17, `access_token_ttl_s`), so a rotation broke such tokens still in flight
 * (docs/api.md §14: "the JWKS keeps serving the previous keys until the last token they signed has
 * expired"). The key store now keeps a retired key for the longest lifetime of any token it signs.
 */
for (const dialect of DIALECTS) {
  describe(`a retired key stays for the longest token it may have signed (${dialect})`, () => {
    let file: TestDatabase;
    let database: Database;
    before(async () => {
      file = await createTestDatabase(dialect);
      database = openDatabase(file.url);
      await migrateToLatest(database.db);
    });
    after(async () => {
      await database.close();
      await file.drop();
    });

    it('kept while a day-long API token may still be in flight, dropped after it', async () => {
      const { db } = database;
      const settings = { accessTokenTtlS: 300, alg: 'ES256' as const, longestTokenTtlS: 86_400 };
      const store = await createKeyStore(db, settings);
      const [old] = store.jwks().keys;
      await rotateSigningKey(db, 'ES256');
      // Retired an hour ago: past the access-token lifetime, within an API token's.
      const retire = (msAgo: number) =>
        db
          .updateTable('signing_keys')
          .set({ retired_at: Date.now() - msAgo })
          .where('kid', '=', String(old?.kid))
          .execute();
      await retire(3_600_000);
      await store.reload();
      assert.ok(
        store.jwks().keys.some((k) => k.kid === old?.kid),
        'still published an hour after its retirement',
      );
      const ownOnly = await createKeyStore(db, { accessTokenTtlS: 300, alg: 'ES256' });
      assert.ok(
        !ownOnly.jwks().keys.some((k) => k.kid === old?.kid),
        'without API tokens: gone after 6 minutes',
      );
      await retire(86_400_000 + 120_000);
      await store.reload();
      assert.ok(
        !store.jwks().keys.some((k) => k.kid === old?.kid),
        'gone once the longest token has expired',
      );
    });
  });
}
