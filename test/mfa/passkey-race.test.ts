import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { SoftCredential } from '../support/webauthn-authenticator.ts';
import { caller, PASSWORD, userWithSession } from './helpers.ts';

/*
 * passkey-credential-race: two accounts registering the same credential ID at once both passed the
 * "already registered?" lookup and both inserted; the loser's unique violation (passkeys.credential_id)
 * answered 500. Now it answers 400 `passkey_invalid` like the lookup does (docs/api.md §13), and
 * exactly one account holds the credential.
 */

interface Ceremony {
  challenge_id: string;
  options: { challenge: string; rp: { id: string }; user: { id: string } };
}

for (const dialect of DIALECTS) {
  describe(`passkeys: the same credential registered by two accounts at once [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    async function ceremonyFor(token: string): Promise<Ceremony> {
      const opts = await caller(t, token)('POST', '/api/v1/passkeys/registration/options', {
        current_password: PASSWORD,
      });
      assert.equal(opts.statusCode, 200, opts.body);
      return json<Ceremony>(opts);
    }

    it('regression: one registration wins (201), the other gets 400 passkey_invalid, never 500', async () => {
      for (let round = 0; round < 5; round++) {
        const a = await userWithSession(t);
        const b = await userWithSession(t);
        const [ca, cb] = await Promise.all([ceremonyFor(a.token), ceremonyFor(b.token)]);
        // One authenticator's credential (one credential ID), offered in both ceremonies.
        const credential = new SoftCredential(ca.options.user.id);
        const [ra, rb] = await Promise.all([
          caller(t, a.token)('POST', '/api/v1/passkeys', {
            challenge_id: ca.challenge_id,
            response: credential.register(ca.options, PUBLIC_URL),
          }),
          caller(t, b.token)('POST', '/api/v1/passkeys', {
            challenge_id: cb.challenge_id,
            response: credential.register(cb.options, PUBLIC_URL),
          }),
        ]);
        const statuses = [ra.statusCode, rb.statusCode].sort();
        assert.deepEqual(statuses, [201, 400], `${ra.body}\n${rb.body}`);
        const refused = ra.statusCode === 400 ? ra : rb;
        assert.equal(json(refused).code, 'passkey_invalid');
        assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
        const rows = await t.ctx.db
          .selectFrom('passkeys')
          .select('user_id')
          .where('credential_id', '=', credential.idText)
          .execute();
        assert.equal(rows.length, 1);
        const winner = ra.statusCode === 201 ? a : b;
        assert.equal(rows[0]?.user_id, winner.user.id);
      }
    });
  });
}
