// The servers of `npm run bench` (bench/run.ts): Gatehouse started as `npm start` starts it, pinned
// like every server of the bench, its users, and the PostgreSQL database the run creates and drops.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { freePort, SERVER_CPU, spawnNode, waitFor200 } from './processes.ts';

export const ADMIN_EMAIL = 'bench-admin@gatehouse.test';
export const ADMIN_PASSWORD = 'correct horse battery staple 42';
/** The login phase's users, one per connection (created with the admin's password). */
export const LOGIN_USERS = Array.from({ length: 16 }, (_, i) => `bench-login-${i}@gatehouse.test`);
export interface Server {
  name: string;
  child: ChildProcess;
  base: string;
  token?: string;
}

/** `npm start`'s command line: leading NAME=value assignments, node's flags, dist/src/main.js. */
function startCommand(): { env: Record<string, string>; args: string[] } {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const words = (pkg.scripts.start ?? '').split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Za-z_]\w*=/.test(words[0])) {
    const [name = '', ...value] = (words.shift() as string).split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node' || words.at(-1) !== 'dist/src/main.js')
    throw new Error(`package.json "start" is not "[NAME=value…] node [flags] dist/src/main.js"`);
  return { env, args: words };
}

/** Starts Gatehouse as `npm start` does (`plain`: `node dist/src/main.js` alone, the flags' A/B). */
export async function startGatehouse(
  name: string,
  env: Record<string, string>,
  plain = false,
  /** Another build of Gatehouse (a directory holding dist/src/main.js) instead of this tree's. */
  cwd?: string,
): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = plain ? { env: {}, args: ['dist/src/main.js'] } : startCommand();
  const child = spawnNode(SERVER_CPU, start.args, {
    env: {
      ...process.env,
      ...start.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdout: 'ignore',
    ...(cwd ? { cwd } : {}),
  });
  await waitFor200(`${base}/health`, performance.now());
  const server: Server = { name, child, base };
  server.token = await login(base);
  return server;
}

export async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`login answered ${res.status}`);
  return body.access_token;
}

export async function addLoginUsers(server: Server): Promise<void> {
  for (const email of LOGIN_USERS) {
    const res = await fetch(`${server.base}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ email, password: ADMIN_PASSWORD }),
    });
    if (res.status !== 201) throw new Error(`creating a login user answered ${res.status}`);
  }
}

/** Users to list: a page of 20 needs more than 20. */
export async function addUsers(server: Server, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${server.base}/api/v1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ email: `bench-${i}@gatehouse.test`, name: `Bench User ${i}` }),
    });
    if (res.status !== 201) throw new Error(`creating a user answered ${res.status}`);
  }
}

/** A database of the run's own (`name`); null without PostgreSQL (its rows are skipped). */
export async function createPgDatabase(
  PG_URL: string,
  log: (line: string) => void,
  name = `gatehouse_bench_${process.pid}`,
): Promise<string | null> {
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    log(`PostgreSQL unavailable (${(err as Error).message}): its rows are skipped`);
    return null;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropPgDatabase(PG_URL: string, url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`);
  await admin.end();
}
