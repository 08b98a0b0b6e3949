import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeProtectedHeader, type JWK } from 'jose';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';

// docs/operations.md, "A compromised signing key": `gatehouse rotate-keys --revoke KID`.

interface Tokens {
  access_token: string;
  refresh_token: string;
}

async function login(t: TestApp): Promise<Tokens> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json<Tokens>(res);
}

const verify = async (t: TestApp, token: string) =>
  (await t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${token}` } }))
    .statusCode;

const jwksKids = async (t: TestApp) =>
  json<{ keys: JWK[] }>(await t.app.inject({ url: '/.well-known/jwks.json' })).keys.map((k) => k.kid);

const kidOf = (token: string) => decodeProtectedHeader(token).kid ?? '';

/** Waits for the instance's 2 s revocation poll (src/kernel/context.ts); bounded, never a timing assertion. */
async function until(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    if (await check()) return true;
    await sleep(250);
  }
  return false;
}

for (const dialect of DIALECTS) {
  describe(`rotate-keys --revoke [${dialect}]`, () => {
    let t: TestApp;
    let other: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
      other = await t.restart();
    });
    after(async () => {
      await other.close();
      await t.destroy();
    });

    it('a compromised key: its tokens stop verifying and it leaves the JWKS on every instance, even the cached verification', async () => {
      const { access_token, refresh_token } = await login(t);
      const kid = kidOf(access_token);
      // Verified once on each instance, so the verified-token cache holds it (src/identity/tokens/access-tokens.ts).
      assert.equal(await verify(t, access_token), 200);
      assert.equal(await verify(other, access_token), 200);

      const run = await runCli(['rotate-keys', '--revoke', kid], t.databaseUrl);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stdout,
        new RegExp(`revoked signing key ${kid}; new ES256 signing key \\S+ signs instead`),
      );

      for (const instance of [t, other]) {
        assert.ok(await until(async () => (await verify(instance, access_token)) === 401));
        assert.ok(!(await jwksKids(instance)).includes(kid), 'the revoked kid is still published');
      }

      // The session survives: the refresh token (opaque, not signed by the key) gets a token of the new key.
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/api/v1/refresh-token',
        payload: { refresh_token },
      });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const fresh = json<Tokens>(refreshed).access_token;
      assert.notEqual(kidOf(fresh), kid);
      assert.equal(await verify(t, fresh), 200);
      assert.equal(await verify(other, fresh), 200);
      assert.ok((await jwksKids(other)).includes(kidOf(fresh)));

      const row = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'keys.revoke')
        .where('target_id', '=', kid)
        .executeTakeFirst();
      assert.ok(row, 'no keys.revoke audit entry');
    });

    it('revoking a retired key adds no new key; revoking it again says so; an unknown kid fails in one line', async () => {
      const before = kidOf((await login(t)).access_token);
      const rotated = await runCli(['rotate-keys'], t.databaseUrl);
      assert.equal(rotated.code, 0, rotated.stderr);
      const run = await runCli(['rotate-keys', '--revoke', before], t.databaseUrl);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        run.stdout.trim(),
        `revoked signing key ${before}; its tokens stop verifying on every instance within 2 s`,
      );
      const again = await runCli(['rotate-keys', '--revoke', before], t.databaseUrl);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout.trim(), `signing key ${before} was already revoked`);
      const unknown = await runCli(['rotate-keys', '--revoke', 'no-such-kid'], t.databaseUrl);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr, 'gatehouse: no signing key has kid no-such-kid\n');
      const current = await t.ctx.db
        .selectFrom('signing_keys')
        .select('kid')
        .where('retired_at', 'is', null)
        .execute();
      assert.equal(current.length, 1, 'exactly one current key');
    });
  });
}
