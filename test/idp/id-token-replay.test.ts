import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { idTokenUseKey, pruneIdTokenUses } from '../../src/modules/providers/upstream/replay.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, postVerify, problem } from '../helpers/idp.ts';
import { createUser } from '../helpers/users.ts';
import { enableTotp, userWithSession } from '../mfa/helpers.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

// docs/api.md §16, "An ID token signs in once": the first accepted use of an ID token (a token
// response, or 403 mfa_required) stores its hash in the shared database until exp + 60 s; any
// later use, on any instance, is 401 idp_token_invalid. A refused token is not recorded.

for (const dialect of DIALECTS) {
  describe(`an ID token signs in once [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    const uses = async (idToken: string) =>
      (
        await t.ctx.db
          .selectFrom('id_token_uses')
          .selectAll()
          .where('token_hash', '=', idTokenUseKey(idToken))
          .execute()
      ).length;

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: { API_FORM: 'full', ...idpEnv(op) } });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('id-token-replay: the second use of an accepted ID token is 401 idp_token_invalid', async () => {
      op.setAccount('replayed', { email: 'replayed@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('replayed');
      const first = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(await uses(idToken), 1);

      const again = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(again.statusCode, 401, again.body);
      assert.equal(problem(again).code, 'idp_token_invalid');
      assert.match(problem(again).detail ?? '', /already been used/);
      assert.ok(!again.body.includes(idToken));

      // Another instance on the same database refuses it too.
      const other = await t.restart();
      try {
        const elsewhere = await postVerify(other, { id_token: idToken, nonce });
        assert.equal(elsewhere.statusCode, 401, elsewhere.body);
        assert.equal(problem(elsewhere).code, 'idp_token_invalid');
      } finally {
        await other.close();
      }
    });

    it('id-token-replay: a re-encoded signature is the same token (keyed by header and payload)', async () => {
      op.setAccount('recoded', { email: 'recoded@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('recoded');
      assert.equal((await postVerify(t, { id_token: idToken, nonce })).statusCode, 200);
      // Flip the spare low bits of the signature's last base64url character: the same bytes for a
      // lenient decoder, a different string.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(idToken.at(-1) ?? 'A');
      const variant = idToken.slice(0, -1) + alphabet[last ^ 1];
      assert.notEqual(variant, idToken);
      const res = await postVerify(t, { id_token: variant, nonce });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(problem(res).code, 'idp_token_invalid');
    });

    it('id-token-replay: of concurrent uses of one token exactly one signs in', async () => {
      op.setAccount('racer', { email: 'racer@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('racer');
      const results = await Promise.all(
        Array.from({ length: 4 }, () => postVerify(t, { id_token: idToken, nonce })),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 401, 401, 401], results.map((r) => r.body).join('\n'));
    });

    it('a token answered with 403 mfa_required is used up too', async () => {
      const { token } = await userWithSession(t, 'second@example.com');
      await enableTotp(t, token);
      op.setAccount('second', { email: 'second@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('second');
      const first = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(first.statusCode, 403, first.body);
      assert.equal(problem(first).code, 'mfa_required');
      const again = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(again.statusCode, 401, again.body);
      assert.equal(problem(again).code, 'idp_token_invalid');
    });

    it('id-token-replay-refused-token: a refused token is not recorded and works once the refusal is lifted', async () => {
      const user = await createUser(t, { email: 'later@example.com', status: 'disabled' });
      op.setAccount('later', { email: 'later@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('later');
      const refused = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(problem(refused).code, 'account_disabled');
      assert.equal(await uses(idToken), 0);

      await t.ctx.db.updateTable('users').set({ status: 'active' }).where('id', '=', user.id).execute();
      const accepted = await postVerify(t, { id_token: idToken, nonce });
      assert.equal(accepted.statusCode, 200, accepted.body);
      assert.equal(json<{ user: { id: string } }>(accepted).user.id, user.id);

      // A token refused by the linking rules (409) is not recorded either.
      await createUser(t, { email: 'root-like@example.com', role: 'admin' });
      op.setAccount('root-like', { email: 'root-like@example.com', email_verified: true });
      const linkToken = await op.signIn('root-like');
      const conflict = await postVerify(t, { id_token: linkToken.idToken, nonce: linkToken.nonce });
      assert.equal(conflict.statusCode, 409, conflict.body);
      assert.equal(await uses(linkToken.idToken), 0);
    });

    it('a used token is kept until its exp plus 60 s, then pruned', async () => {
      op.setAccount('kept', { email: 'kept@example.com', email_verified: true });
      const { idToken, nonce } = await op.signIn('kept');
      assert.equal((await postVerify(t, { id_token: idToken, nonce })).statusCode, 200);
      const row = await t.ctx.db
        .selectFrom('id_token_uses')
        .selectAll()
        .where('token_hash', '=', idTokenUseKey(idToken))
        .executeTakeFirstOrThrow();
      const exp = decodeJwt(idToken).exp ?? 0;
      assert.equal(Number(row.expires_at), exp * 1000 + 60_000);

      await pruneIdTokenUses(t.ctx, Number(row.expires_at));
      assert.equal(await uses(idToken), 1, 'kept up to its expiry');
      await pruneIdTokenUses(t.ctx, Number(row.expires_at) + 1);
      assert.equal(await uses(idToken), 0, 'gone after it');
    });
  });
}
