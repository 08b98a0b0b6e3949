import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

// API §24: users gain `locale` (a canonical BCP 47 tag or null), self-editable like `name`,
// accepted by POST /users and POST /users/invite; anything else is 400 and stores nothing.
for (const dialect of DIALECTS) {
  describe(`users' locale [${dialect}]`, () => {
    let t: TestApp;
    let root: UserRow;
    let rootH: { authorization: string };
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      root = await firstAdmin(t);
      rootH = await authHeaders(t, root);
    });
    after(() => t.destroy());

    const stored = async (id: string) =>
      (await t.ctx.db.selectFrom('users').select('locale').where('id', '=', id).executeTakeFirstOrThrow())
        .locale;

    it('a person sets and clears their own locale, canonicalised; the user object shows it', async () => {
      const u = await createUser(t, { email: 'lina@example.com' });
      const h = await authHeaders(t, u);
      const put = (payload: object) =>
        t.app.inject({ method: 'PUT', url: `/api/v1/users/${u.id}`, headers: h, payload });
      const set = await put({ locale: 'de-ch' });
      assert.equal(set.statusCode, 200);
      assert.equal(json(set).locale, 'de-CH');
      assert.equal(await stored(u.id), 'de-CH');
      // Any well-formed language, not only the served ones: the person's language is theirs.
      assert.equal(json(await put({ locale: 'sw' })).locale, 'sw');
      const cleared = await put({ locale: null, name: 'Lina' });
      assert.equal(json(cleared).locale, null);
      assert.equal(json(cleared).name, 'Lina');
      assert.equal(await stored(u.id), null);
      // Still only name and locale for a non-admin.
      assert.equal((await put({ locale: 'fr', role: 'admin' })).statusCode, 403);
      assert.equal(await stored(u.id), null);
    });

    it('a malformed tag is 400 validation_failed and stores nothing', async () => {
      const u = await createUser(t, { email: 'malformed@example.com' });
      for (const locale of ['', 'en_US!', 'x', '12', 'de-', 'a'.repeat(36), 42]) {
        const res = await t.app.inject({
          method: 'PUT',
          url: `/api/v1/users/${u.id}`,
          headers: rootH,
          payload: { locale },
        });
        assert.equal(res.statusCode, 400, String(locale));
        assert.equal(json(res).code, 'validation_failed');
      }
      assert.equal(await stored(u.id), null);
    });

    it('POST /users and POST /users/invite accept it', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: rootH,
        payload: { email: 'nuno@example.com', locale: 'pt-br' },
      });
      assert.equal(created.statusCode, 201);
      assert.equal(json(created).locale, 'pt-BR');
      const invited = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users/invite',
        headers: rootH,
        payload: { email: 'yuki@example.com', locale: 'ja' },
      });
      assert.equal(invited.statusCode, 201);
      const row = await t.ctx.db
        .selectFrom('users')
        .select('locale')
        .where('email', '=', 'yuki@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(row.locale, 'ja');
      // Its mail goes in the invitee's language, stored with the queued message.
      const queued = await t.ctx.db
        .selectFrom('outbox')
        .select(['lang', 'subject', 'text_body', 'html_body'])
        .where('recipient', '=', 'yuki@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(queued.lang, 'ja');
      assert.match(queued.subject, /招待/);
      assert.match(queued.html_body, /<html lang="ja" dir="ltr">/);
      assert.match(queued.text_body, /\/account\/invitation\/[A-Za-z0-9_-]+\?lang=ja/);
      assert.match(queued.text_body, /UTC/);
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: rootH,
        payload: { email: 'bad@example.com', locale: 'not a tag' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(
        await t.ctx.db
          .selectFrom('users')
          .select('id')
          .where('email', '=', 'bad@example.com')
          .executeTakeFirst(),
        undefined,
      );
    });
  });
}
