import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// docs/api.md §16 "Gatehouse's own API accepts only its own audience": jose's `audience` option
// accepts an `aud` array that merely contains it, so a token minted for another audience (an API
// of its own, or a list naming Gatehouse among others) could have called /api/v1 as its user.
// Gatehouse's own key signs every token here: only the audience differs.
for (const dialect of DIALECTS) {
  describe(`access-token audience is exactly PUBLIC_URL [${dialect}]`, () => {
    let t: TestApp;
    let userId: string;
    let sessionId: string;

    before(async () => {
      t = await buildTestApp(dialect);
      const user = await createUser(t);
      userId = user.id;
      const tokens = await sessionFor(t, user);
      sessionId = JSON.parse(Buffer.from(tokens.access_token.split('.')[1] as string, 'base64url').toString())
        .sid as string;
    });
    after(() => t.destroy());

    /** A token signed with Gatehouse's current signing key, valid in every way but `aud`. */
    function tokenFor(aud: unknown): Promise<string> {
      const key = t.ctx.keys.signingKey();
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: PUBLIC_URL,
        aud: aud as string,
        sub: userId,
        sid: sessionId,
        role: 'user',
        jti: uuidv7(),
        iat: now,
        exp: now + 300,
      })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
        .sign(key.privateKey);
    }

    const call = (token: string, url: string) =>
      t.app.inject({ url, headers: { authorization: `Bearer ${token}` } });

    it('accepts the exact audience (the baseline)', async () => {
      const token = await tokenFor(PUBLIC_URL);
      assert.equal((await call(token, '/api/v1/profile')).statusCode, 200);
      assert.equal((await call(token, '/api/v1/verify-token')).statusCode, 200);
    });

    const refused: Array<[string, unknown]> = [
      ['another audience', 'https://api.example.com'],
      ['PUBLIC_URL with a trailing slash', `${PUBLIC_URL}/`],
      ['an array holding only PUBLIC_URL', [PUBLIC_URL]],
      ['an array holding PUBLIC_URL and another', [PUBLIC_URL, 'https://api.example.com']],
      ['an array holding another and PUBLIC_URL', ['https://api.example.com', PUBLIC_URL]],
    ];
    for (const [name, aud] of refused) {
      it(`token-for-another-audience: ${name} is 401 token_invalid on /api/v1`, async () => {
        const token = await tokenFor(aud);
        for (const url of ['/api/v1/profile', '/api/v1/verify-token']) {
          const res = await call(token, url);
          assert.equal(res.statusCode, 401, `${url}: ${res.body}`);
          assert.equal(json(res).code, 'token_invalid');
        }
      });
    }
  });
}
