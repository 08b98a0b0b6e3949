// Organization tokens against their plain counterparts, same run, in turns (docs/benchmarks.md,
// "Organization tokens"; issue 42's targets): one Gatehouse (API_FORM=full, SQLite) pinned to CPU 0
// like every server of `npm run bench`, loads from CPU 1, 16 connections.
// - OAuth refresh grant naming an organization (`organization=<id>`: scope, membership and
//   second-factor checks, `org_id` kept beside the grant) against a plain refresh grant (target ≥ 0.9×);
// - `POST /api/v1/login` with the `organizations` module on (the user holds a global role: the
//   `roles` claim is read and signed) against the module off (target ≥ 0.95×), switched through the
//   admin API between turns.
// Figures: answers per second of each load, and the ratio per round and over all rounds.
//   node bench/organization-tokens.ts [--rounds 3] [--duration 3] [--no-build]
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadResult } from './load.ts';
import { codeClient, oauthRefreshTokens } from './oauth-code.ts';
import { LOAD_CPU, runNodeJson, stopChild } from './processes.ts';
import { ADMIN_PASSWORD, addLoginUsers, LOGIN_USERS, type Server, startGatehouse } from './run-servers.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    'no-build': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const DURATION_S = Number(values.duration);
const CONNECTIONS = 16;
const log = (line: string) => process.stderr.write(`organization-tokens: ${line}\n`);

async function call(
  s: Server,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function chain(url: string, tokens: string[], form: Record<string, string>, authorization: string) {
  const out = await runNodeJson<{ rps: number; statusCounts: unknown }>(LOAD_CPU, [
    'bench/chain-load.ts',
    JSON.stringify({
      url,
      field: 'refresh_token',
      tokens,
      form,
      authorization,
      durationS: DURATION_S,
      warmupS: 1,
    }),
  ]);
  if (out.rps === 0) throw new Error(`no 2xx answers: ${JSON.stringify(out.statusCounts)}`);
  return out.rps;
}

async function logins(s: Server): Promise<number> {
  const out = await runNodeJson<{ results: LoadResult[] }>(LOAD_CPU, [
    'bench/load.ts',
    JSON.stringify([
      {
        name: 'login',
        url: `${s.base}/api/v1/login`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        bodies: LOGIN_USERS.slice(0, CONNECTIONS).map((email) =>
          JSON.stringify({ email, password: ADMIN_PASSWORD }),
        ),
        connections: CONNECTIONS,
        durationS: DURATION_S,
        warmupS: 1,
      },
    ]),
  ]);
  const r = out.results[0] as LoadResult;
  if (r.rps === 0) throw new Error('login: no 2xx answers');
  return r.rps;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  if (!values['no-build']) {
    log('building dist/ (npx tsc -p tsconfig.build.json)');
    execSync('npx tsc -p tsconfig.build.json', { stdio: 'inherit' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-org-bench-'));
  let s: Server | undefined;
  try {
    s = await startGatehouse('sqlite', {
      DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
      API_FORM: 'full',
      SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      // `full` serves passkeys, which need a domain name (as bench/sizing.ts sets them).
      WEBAUTHN_RP_ID: 'localhost',
      WEBAUTHN_ORIGINS: 'http://localhost',
      // Every round signs the admin in 32 more times through the code flow (one session each); at the
      // default cap of 100 the oldest session, the one whose token drives the bench, ended in round
      // 4 and its next code exchange was refused invalid_grant (docs/auth.md, "How many sessions").
      SESSIONS_PER_USER_MAX: '100000',
    });
    const server = s;
    await addLoginUsers(server);
    await call(server, 'PUT', '/api/v1/roles/analyst', { permissions: ['reports:read'] });
    const users = (await call(server, 'GET', '/api/v1/users?limit=100')).data as Array<{
      id: string;
      email: string;
    }>;
    for (const u of users) await call(server, 'PUT', `/api/v1/users/${u.id}/roles`, { roles: ['analyst'] });
    const org = await call(server, 'POST', '/api/v1/organizations', { name: 'Acme' });
    const admin = users.find((u) => !u.email.startsWith('bench-login-')) as { id: string };
    await call(server, 'PUT', `/api/v1/organizations/${org.id}/members/${admin.id}`, { roles: ['member'] });
    const client = await codeClient(server, ['openid', 'email', 'organizations']);
    const url = `${server.base}/oauth2/token`;
    const rows = {
      refresh: [] as number[],
      orgRefresh: [] as number[],
      loginOff: [] as number[],
      loginOn: [] as number[],
    };
    // sso needs organizations (docs/api.md §23): off for the whole run, so the login pair switches
    // organizations alone.
    await call(server, 'PUT', '/api/v1/admin/modules/sso', { enabled: false });
    for (let round = 1; round <= ROUNDS; round++) {
      // Fresh chains each round: every grant signs in through the code flow first.
      const plain = await oauthRefreshTokens(server, client, CONNECTIONS, { scope: 'openid email' });
      const inOrg = await oauthRefreshTokens(server, client, CONNECTIONS, {
        scope: 'openid organizations',
        organization: String(org.id),
      });
      rows.refresh.push(await chain(url, plain, { grant_type: 'refresh_token' }, client.basic));
      rows.orgRefresh.push(
        await chain(url, inOrg, { grant_type: 'refresh_token', organization: String(org.id) }, client.basic),
      );
      await call(server, 'PUT', '/api/v1/admin/modules/organizations', { enabled: false });
      rows.loginOff.push(await logins(server));
      await call(server, 'PUT', '/api/v1/admin/modules/organizations', { enabled: true });
      rows.loginOn.push(await logins(server));
      log(
        `round ${round}: refresh ${rows.refresh.at(-1)?.toFixed(0)} /s, organization refresh ${rows.orgRefresh
          .at(-1)
          ?.toFixed(
            0,
          )} /s; login off ${rows.loginOff.at(-1)?.toFixed(0)} /s, on ${rows.loginOn.at(-1)?.toFixed(0)} /s`,
      );
    }
    const result = {
      refresh: median(rows.refresh),
      organizationRefresh: median(rows.orgRefresh),
      refreshRatio: median(rows.orgRefresh) / median(rows.refresh),
      loginOff: median(rows.loginOff),
      loginOn: median(rows.loginOn),
      loginRatio: median(rows.loginOn) / median(rows.loginOff),
      rounds: rows,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    if (s) await stopChild(s.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
