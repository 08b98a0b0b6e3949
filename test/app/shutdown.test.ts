import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PASSWORD_LOGIN } from '../../src/identity/index.ts';
import { openSession } from '../../src/identity/sessions.ts';
import { closeContext, createContext } from '../../src/kernel/context.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { ADMIN_EMAIL, testEnv } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

interface Service {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(env: Record<string, string>): Service {
  const child = spawn(process.execPath, [join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d;
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

async function waitForHealth(port: number, service: Service): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (service.child.exitCode !== null) throw new Error(`service exited:\n${service.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`service did not come up:\n${service.output()}`);
}

/** An access token for the first admin, minted from the same database and configuration. */
async function adminToken(env: Record<string, string>): Promise<string> {
  const config = loadConfig(env);
  const database = openDatabase(config.databaseUrl);
  const ctx = await createContext(config, database, createLogger('silent'));
  try {
    const admin = await ctx.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', ADMIN_EMAIL)
      .executeTakeFirstOrThrow();
    return (await openSession(ctx, admin, { ip: '127.0.0.1', userAgent: 'shutdown test' }, PASSWORD_LOGIN))
      .access_token;
  } finally {
    await closeContext(ctx);
    await database.close();
  }
}

function readResponse(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(out));
  });
}

describe('graceful shutdown of the real process', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-shutdown-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGTERM: stops accepting, finishes the in-flight request, exits 0', async () => {
    const port = await freePort();
    const env = testEnv(`sqlite:${join(dir, 'term.db')}`, {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    const service = start(env);
    try {
      await waitForHealth(port, service);
      const token = await adminToken(env);

      // A request whose body is still arriving when the signal comes.
      const body = '{"enabled":false}';
      const socket = connect(port, '127.0.0.1');
      const response = readResponse(socket);
      socket.write(
        [
          'PUT /api/v1/admin/modules/account HTTP/1.1',
          'Host: 127.0.0.1',
          `Authorization: Bearer ${token}`,
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
          '',
          body.slice(0, 5),
        ].join('\r\n'),
      );
      await sleep(500);
      service.child.kill('SIGTERM');
      await sleep(500);
      assert.equal(service.child.exitCode, null, 'still running while a request is in flight');

      // New connections are no longer served (best effort: refused, or 503 while closing).
      let refused = false;
      for (let i = 0; i < 50 && !refused; i++) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/health`);
          refused = res.status === 503;
        } catch {
          refused = true;
        }
        if (!refused) await sleep(100);
      }
      assert.ok(refused, 'no longer accepting');

      socket.end(body.slice(5));
      const raw = await response;
      assert.match(raw, /^HTTP\/1\.1 200 /, raw);
      assert.match(raw, /"name":"account","enabled":false/);

      const exit = await Promise.race([service.exited, sleep(20_000).then(() => null)]);
      assert.deepEqual(exit, { code: 0, signal: null }, service.output());
      assert.match(service.output(), /"msg":"shutting down"/);
      assert.match(service.output(), /"signal":"SIGTERM"/);
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  });

  it('SIGINT with nothing in flight: exits 0 and the database opens cleanly again', async () => {
    const port = await freePort();
    const url = `sqlite:${join(dir, 'int.db')}`;
    const env = testEnv(url, { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    const service = start(env);
    try {
      await waitForHealth(port, service);
      service.child.kill('SIGINT');
      const exit = await Promise.race([service.exited, sleep(20_000).then(() => null)]);
      assert.deepEqual(exit, { code: 0, signal: null }, service.output());
      const database = openDatabase(url);
      try {
        const users = await database.db.selectFrom('users').select('email').execute();
        assert.deepEqual(users, [{ email: ADMIN_EMAIL }]);
      } finally {
        await database.close();
      }
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  });
});
