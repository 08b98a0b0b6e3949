import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DIALECTS } from '../helpers/databases.ts';
import { type Gatehouse, type Registered, startGatehouse, userAgent, webClient } from './harness.ts';

/*
 * Python's Authlib (Debian's python3-authlib and python3-requests, run by Debian's /usr/bin/python3):
 * test/interop/authlib-rp.py is the relying party, this file the person's browser. Without them the
 * test skips on a developer machine and fails under CI=true (.ci/run installs them).
 */

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./authlib-rp.py', import.meta.url));
const APP = 'http://127.0.0.1:4918';
const missing = ['authlib', 'requests'].some((m) => !existsSync(`/usr/lib/python3/dist-packages/${m}`));
const skip = missing && process.env.CI !== 'true' ? 'python3-authlib is not installed' : false;

interface Results {
  logout: string;
  claims: Record<string, unknown>;
  userinfo: Record<string, unknown>;
  rotated: boolean;
  revocation: { status: number; content_type: string | null };
  after_revoke: string;
}

for (const dialect of DIALECTS) {
  describe(`interop: Authlib (Python, ${dialect})`, { skip }, () => {
    let g: Gatehouse;
    let app: Registered;
    before(async () => {
      g = await startGatehouse(dialect);
      app = await g.client(webClient('Authlib', APP, '/callback'));
    });
    after(() => g?.close());

    it('signs in, checks the ID token, reads userinfo, refreshes, revokes and logs out', async () => {
      const p = await g.person();
      const ua = userAgent(g, p);
      const child = spawn(PYTHON, [SCRIPT], {
        env: {
          PATH: process.env.PATH ?? '',
          AUTHLIB_INSECURE_TRANSPORT: '1',
          ISSUER: g.origin,
          CLIENT_ID: app.client_id,
          CLIENT_SECRET: String(app.client_secret),
          REDIRECT_URI: `${APP}/callback`,
          SIGNED_OUT_URI: `${APP}/signed-out`,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const next = async () => {
        const line = await lines.next();
        assert.ok(!line.done, `authlib-rp.py stopped:\n${errors}`);
        return JSON.parse(line.value) as Record<string, unknown>;
      };
      try {
        const { authorize } = (await next()) as { authorize: string };
        const back = await ua.walk(authorize, {}, (u) => u.href.startsWith(`${APP}/callback`));
        child.stdin.write(`${back.url.href}\n`);
        const r = (await next()) as unknown as Results;
        assert.equal(r.claims.sub, p.id);
        assert.equal(r.claims.iss, g.origin);
        assert.equal(r.claims.aud, app.client_id);
        assert.equal(r.userinfo.email, p.email);
        assert.equal(r.userinfo.name, p.name);
        assert.equal(r.rotated, true);
        assert.equal(r.revocation.status, 200);
        assert.match(
          String(r.revocation.content_type),
          /^application\/json/,
          'revocation answers JSON (§17)',
        );
        assert.equal(r.after_revoke, 'invalid_grant');
        const out = await ua.walk(r.logout, {}, (u) => u.href.startsWith(`${APP}/signed-out`));
        assert.equal(out.url.href, `${APP}/signed-out?state=bye`);
        assert.equal(await exited, 0, errors);
      } finally {
        child.kill();
      }
    });
  });
}
