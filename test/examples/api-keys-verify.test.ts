import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { keyHeaders, makeKey } from '../api-keys/helpers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { freePort } from '../support/service-process.ts';

/*
 * docs/api-keys.md, "Protecting your own API": examples/api-keys-verify/server.mjs (node:http and
 * fetch only) as its own process, checking every request's key with Gatehouse's verify.
 */

const SERVER = fileURLToPath(new URL('../../examples/api-keys-verify/server.mjs', import.meta.url));

function startExample(env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER], { env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('listening')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`example exited ${code}`)));
  });
}

for (const dialect of DIALECTS) {
  describe(`examples/api-keys-verify [${dialect}]`, () => {
    let t: TestApp;
    let example: ChildProcess;
    let base: string;
    let admin: Record<string, string>;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.server.address();
      const gatehouse = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      admin = await authHeaders(t, await firstAdmin(t));
      const verifier = await makeKey(t, admin, { name: 'notes api', scopes: ['api_keys:verify'] });
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      example = await startExample({
        GATEHOUSE_URL: gatehouse,
        GATEHOUSE_VERIFY_KEY: verifier.key,
        PORT: String(port),
      });
    });
    after(async () => {
      example?.kill('SIGTERM');
      await t.destroy();
    });

    it("serves a customer's key, refuses a bad, revoked or limited one, and authorizes by the owner", async () => {
      const customer = await createUser(t, { email: 'customer@example.test' });
      const ch = await authHeaders(t, customer);
      const key = await makeKey(t, ch, { name: 'my integration', rate_limit: { requests: 3, window_s: 60 } });
      const whoami = await fetch(`${base}/whoami`, { headers: keyHeaders(key.key) });
      assert.equal(whoami.status, 200);
      assert.equal(((await whoami.json()) as { owner: string }).owner, customer.id);
      assert.equal((await fetch(`${base}/notes`, { headers: keyHeaders(key.key) })).status, 200);
      assert.equal(
        (await fetch(`${base}/notes`, { method: 'DELETE', headers: keyHeaders(key.key) })).status,
        403,
      );
      const limited = await fetch(`${base}/notes`, { headers: keyHeaders(key.key) });
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      assert.equal((await fetch(`${base}/notes`)).status, 401);
      const typo = `${key.key.slice(0, -1)}${key.key.endsWith('a') ? 'b' : 'a'}`;
      assert.equal((await fetch(`${base}/notes`, { headers: keyHeaders(typo) })).status, 401);
      const other = await makeKey(t, ch, { name: 'to revoke' });
      assert.equal((await fetch(`${base}/notes`, { headers: keyHeaders(other.key) })).status, 200);
      await t.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${other.id}`, headers: ch });
      const revoked = await fetch(`${base}/notes`, { headers: keyHeaders(other.key) });
      assert.equal(revoked.status, 401);
      assert.deepEqual(await revoked.json(), { error: 'revoked' });
      const adminKey = await makeKey(t, admin, { name: 'ops' });
      assert.equal(
        (await fetch(`${base}/notes`, { method: 'DELETE', headers: keyHeaders(adminKey.key) })).status,
        200,
      );
    });
  });
}
