import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hasCompatibilityCharacters, normalizeEmail } from '../../src/identity/index.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

// Issue 17.2: full Unicode lower-casing turned `\u212Aate@example.com` (KELVIN SIGN) into
// `kate@example.com`, so two different addresses matched one account.
const PASSWORD = 'a long and unusual passphrase 7';
const KELVIN = '\u212Aate@example.com';

describe('normalizeEmail', () => {
  it('kelvin-sign-email-folds-into-another-account: folds ASCII case only and refuses what NFKC would change', () => {
    assert.equal(normalizeEmail(' Kate@Example.COM '), 'kate@example.com');
    for (const email of [
      KELVIN,
      'ｋate@example.com',
      'ﬁona@example.com',
      'kate@ｅxample.com',
      '\u0130da@example.com',
    ]) {
      assert.equal(normalizeEmail(email), null, JSON.stringify(email));
    }
    assert.equal(hasCompatibilityCharacters(KELVIN), true);
    assert.equal(hasCompatibilityCharacters('ﬁona@example.com'), true);
    assert.equal(hasCompatibilityCharacters('kate@example.com'), false);
  });
});

for (const dialect of DIALECTS) {
  describe(`two addresses are never one account [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('kelvin-sign-email-folds-into-another-account: no login, creation or update under the folded address', async () => {
      const kate = await createUser(t, { email: 'kate@example.com', password: PASSWORD });
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: KELVIN, password: PASSWORD },
      });
      assert.equal(login.statusCode, 401, 'the KELVIN SIGN address is not kate');
      const admin = await authHeaders(t, await firstAdmin(t));
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: admin,
        payload: { email: KELVIN },
      });
      assert.equal(created.statusCode, 400, created.body);
      assert.equal(json(created).code, 'validation_failed');
      const other = await createUser(t);
      const updated = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${other.id}`,
        headers: admin,
        payload: { email: KELVIN },
      });
      assert.equal(updated.statusCode, 400, updated.body);
      const row = await t.ctx.db
        .selectFrom('users')
        .select('email')
        .where('id', '=', kate.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.email, 'kate@example.com');
    });
  });
}
