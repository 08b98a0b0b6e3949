import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { invite } from './helpers.ts';

for (const dialect of DIALECTS) {
  describe(`invitation mail and APP_NAME [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'B', APP_NAME: 'Acme Accounts' } });
    });
    after(async () => {
      await t.destroy();
    });

    it('regression: the first invitation mail ignored APP_NAME (only the resend passed it); both name the product now', async () => {
      const admin = await authHeaders(t, await createUser(t, { role: 'admin', name: 'Ada' }));
      const res = await invite(t, admin, { email: 'invited@example.com' });
      assert.equal(res.statusCode, 201, res.body);
      const row = await t.ctx.db
        .selectFrom('outbox')
        .select(['subject', 'text_body', 'html_body'])
        .where('recipient', '=', 'invited@example.com')
        .executeTakeFirstOrThrow();
      assert.match(row.subject, /Acme Accounts/);
      assert.match(row.text_body, /Acme Accounts/);
      assert.doesNotMatch(`${row.subject}\n${row.text_body}`, /Gatehouse/);
    });
  });
}
