import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { decodeJwt, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../helpers/app.ts';
import { freePort, type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

/*
 * The resource servers of examples/ (docs/verifying-tokens.md), each set up as its library's README
 * says, against a real Gatehouse process with the default algorithm: a logged-in user's token is
 * accepted; a tampered, expired, other-algorithm, wrong-audience or unsigned token is refused.
 * Their dependencies live in examples/<name>/ (not the service's package.json): .ci/run installs
 * them; outside CI a missing install is done here once (the npm registry must be reachable).
 */

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const NAMES = ['express', 'fastify', 'jose'] as const;
// CI runs the default algorithm; TEST_EXAMPLES_ALG=RS256 (or EdDSA) runs the same checks on another.
const ALG = process.env.TEST_EXAMPLES_ALG ?? 'ES256';
// Which examples check the RFC 9068 token type themselves (@fastify/jwt does not look at `typ`).
const CHECKS_TYP = new Set(['express', 'jose']);

function ensureInstalled(name: string): void {
  const dir = join(EXAMPLES, name);
  if (existsSync(join(dir, 'node_modules'))) return;
  if (process.env.CI === 'true') {
    throw new Error(
      `examples/${name} has no node_modules: .ci/run must install it (npm ci --prefix examples/${name})`,
    );
  }
  execFileSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'ignore' });
}

async function startExample(name: string, issuer: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['server.js'], {
    cwd: join(EXAMPLES, name),
    env: { PATH: process.env.PATH ?? '', GATEHOUSE_URL: issuer, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const url = `http://127.0.0.1:${port}/hello`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`examples/${name} exited:\n${out}`);
    try {
      await fetch(url);
      return { child, url };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`examples/${name} did not listen:\n${out}`);
}

describe(`example resource servers verify Gatehouse tokens (examples/, ${ALG})`, () => {
  let gatehouse: ServiceProcess;
  let dir: string;
  let issuer: string;
  let good: string;
  const bad: Record<string, string> = {};

  before(async () => {
    for (const name of NAMES) ensureInstalled(name);
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-examples-'));
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    const dbFile = join(dir, 'gatehouse.db');
    gatehouse = await startServiceProcess(
      {
        DATABASE_URL: `sqlite:${dbFile}`,
        PUBLIC_URL: issuer,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        LOG_LEVEL: 'warn',
        ...(ALG === 'ES256' ? {} : { ACCESS_TOKEN_ALG: ALG }),
      },
      300,
      port,
    );
    const res = await fetch(`${issuer}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    assert.equal(res.status, 200);
    good = ((await res.json()) as { access_token: string }).access_token;

    // Forgeries made with the real signing key (read from the database file) or with another key.
    const db = new SQLite(dbFile, { readonly: true });
    const row = db
      .prepare('select kid, alg, private_jwk from signing_keys where retired_at is null')
      .get() as {
      kid: string;
      alg: string;
      private_jwk: string;
    };
    db.close();
    assert.equal(row.alg, ALG);
    const realKey = await importJWK(JSON.parse(row.private_jwk) as JWK, row.alg);
    const claims = decodeJwt(good);
    const now = Math.floor(Date.now() / 1000);
    const forge = (payload: Record<string, unknown>, header: Record<string, unknown> = {}, key = realKey) =>
      new SignJWT({ ...claims, ...payload })
        .setProtectedHeader({ alg: row.alg, kid: row.kid, typ: 'at+jwt', ...header })
        .sign(key);
    const [h, p, s = ''] = good.split('.');
    bad.tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, role: 'superuser' })).toString('base64url')}.${s}`;
    bad.expired = await forge({ iat: now - 3600, exp: now - 1800 });
    bad.wrongAudience = await forge({ aud: 'http://another-service.test' });
    bad.wrongIssuer = await forge({ iss: 'http://127.0.0.1:9' });
    const otherAlg = ALG === 'RS256' ? 'ES256' : 'RS256';
    const other = await generateKeyPair(otherAlg);
    bad.otherAlg = await forge({}, { alg: otherAlg }, other.privateKey as CryptoKey);
    bad.unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: row.kid })).toString('base64url')}.${p}.`;
    bad.idTokenType = await forge({}, { typ: 'JWT' });
  });

  after(async () => {
    await gatehouse?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const name of NAMES) {
    it(`${name}: 200 for a Gatehouse token, 401 for tampered, expired, other-alg, wrong aud/iss, unsigned`, async () => {
      const example = await startExample(name, issuer);
      try {
        const call = (token?: string) =>
          fetch(example.url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        const ok = await call(good);
        assert.equal(ok.status, 200, await ok.clone().text());
        const body = (await ok.json()) as { hello: string; role: string };
        assert.equal(body.hello, decodeJwt(good).sub);
        assert.equal(body.role, 'admin');
        assert.equal((await call()).status, 401, 'no token');
        for (const [kind, token] of Object.entries(bad)) {
          if (kind === 'idTokenType' && !CHECKS_TYP.has(name)) continue;
          assert.equal((await call(token)).status, 401, `${name} must refuse the ${kind} token`);
        }
        // Still 200 after all those refusals (no refetch storm locked it out).
        assert.equal((await call(good)).status, 200);
      } finally {
        example.child.kill('SIGTERM');
      }
    });
  }
});
