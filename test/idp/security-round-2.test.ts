import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { countFor, idpEnv, postVerify, problem, signInThroughIdp } from '../helpers/idp.ts';
import { createUser } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';

// Issue 17, items 2, 3 and 9, as they reach POST /api/v1/idp/verify.
const now = () => Math.floor(Date.now() / 1000);

for (const dialect of DIALECTS) {
  describe(`idp verify: security round 2 [${dialect}]`, () => {
    let op: OidcHarness;
    let t: TestApp;

    before(async () => {
      op = await startOidcProvider();
      t = await buildTestApp(dialect, { env: idpEnv(op) });
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    const userCount = async () =>
      Number(
        (
          await t.ctx.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('kelvin-sign-email-folds-into-another-account: a provider address with compatibility characters is refused (400), never matched', async () => {
      const kate = await createUser(t, { email: 'kate@example.com' });
      for (const email of ['\u212Aate@example.com', 'ｋate@example.com', 'ﬁona@example.com']) {
        const token = await op.craftIdToken({ sub: `compat-${email}`, email, email_verified: true });
        const res = await postVerify(t, { id_token: token });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(problem(res).code, 'validation_failed');
      }
      assert.deepEqual(await countFor(t, 'kate@example.com', 'compat-\u212Aate@example.com'), {
        users: 1,
        identities: 0,
      });
      const identities = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('user_id', '=', kate.id)
        .execute();
      assert.equal(identities.length, 0, 'nothing was linked to kate');
    });

    it('idp-unverified-email-oracle: an unverified address answers the same 401 whether or not it is taken', async () => {
      await createUser(t, { email: 'taken@example.com' });
      const users = await userCount();
      const answers = [];
      for (const email of ['taken@example.com', 'free@example.com']) {
        op.setAccount(`unverified-${email}`, { email, email_verified: false });
        const res = await signInThroughIdp(t, op, `unverified-${email}`);
        assert.equal(res.statusCode, 401, res.body);
        const { code, detail } = problem(res);
        answers.push({ code, detail });
      }
      assert.deepEqual(answers[0], answers[1]);
      assert.deepEqual(answers[0], {
        code: 'idp_token_invalid',
        detail: 'The provider has not verified this e-mail address',
      });
      assert.equal(await userCount(), users, 'no account created');
      assert.deepEqual(await countFor(t, 'taken@example.com', 'unverified-taken@example.com'), {
        users: 1,
        identities: 0,
      });
    });

    it('idp-unverified-email-squatting: an unverified address creates nothing, so its owner signs in later', async () => {
      op.setAccount('squatter', { email: 'grace@example.com', email_verified: false });
      assert.equal((await signInThroughIdp(t, op, 'squatter')).statusCode, 401);
      assert.deepEqual(await countFor(t, 'grace@example.com', 'squatter'), { users: 0, identities: 0 });
      op.setAccount('grace', { email: 'grace@example.com', email_verified: true, name: 'Grace' });
      const owner = await signInThroughIdp(t, op, 'grace');
      assert.equal(owner.statusCode, 200, owner.body);
      assert.equal(json<{ created: boolean }>(owner).created, true);
      assert.deepEqual(await countFor(t, 'grace@example.com', 'grace'), { users: 1, identities: 1 });
    });

    it('nul-in-idp-claims-reaches-postgres: control characters in sub, email or name are refused (401), nothing stored', async () => {
      const users = await userCount();
      const cases: Array<[string, Record<string, unknown>]> = [
        ['sub', { sub: 'nul\u0000sub' }],
        ['email', { sub: 'nul-email', email: 'nul\u0000@example.com', email_verified: true }],
        ['name', { sub: 'nul-name', email: 'nulname@example.com', email_verified: true, name: 'Eve\u0000' }],
        [
          'given_name',
          {
            sub: 'nul-given',
            email: 'nulgiven@example.com',
            email_verified: true,
            name: undefined,
            given_name: 'E\u0000',
          },
        ],
        [
          'name',
          { sub: 'ctl-name', email: 'ctlname@example.com', email_verified: true, name: 'Eve\u001b[31m' },
        ],
      ];
      for (const [claim, overrides] of cases) {
        const res = await postVerify(t, { id_token: await op.craftIdToken(overrides) });
        assert.equal(res.statusCode, 401, `${claim}: ${res.body}`);
        assert.equal(problem(res).code, 'idp_token_invalid');
        assert.match(problem(res).detail ?? '', new RegExp(`\\(${claim}\\)`));
      }
      assert.equal(await userCount(), users);
      // In a request field, NUL is a 400 at the edge.
      const field = await postVerify(t, { id_token: 'a.b.c', nonce: 'n\u0000' });
      assert.equal(field.statusCode, 400);
      assert.equal(problem(field).code, 'validation_failed');
    });

    it('id-token-without-nonce-has-no-max-age: an ID token issued over OIDC_MAX_TOKEN_AGE_S (600 s) ago is refused', async () => {
      const old = await op.craftIdToken({ sub: 'old-token', iat: now() - 3600, exp: now() + 3600 });
      const res = await postVerify(t, { id_token: old });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(problem(res).code, 'idp_token_invalid');
      assert.match(problem(res).detail ?? '', /\(iat\).*OIDC_MAX_TOKEN_AGE_S/);
      // Within the bound (and its 60 s skew) it is fine.
      const recent = await op.craftIdToken({
        sub: 'recent-token',
        email: 'recent@example.com',
        email_verified: true,
        iat: now() - 600,
      });
      assert.equal((await postVerify(t, { id_token: recent })).statusCode, 200);
      // Configurable.
      const strict = await t.restart({ OIDC_MAX_TOKEN_AGE_S: '60' });
      try {
        const res2 = await strict.app.inject({
          method: 'POST',
          url: '/api/v1/idp/verify',
          payload: { id_token: await op.craftIdToken({ sub: 'recent-token', iat: now() - 300 }) },
        });
        assert.equal(res2.statusCode, 401, res2.body);
      } finally {
        await strict.close();
      }
    });
  });
}
