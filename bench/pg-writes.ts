// Writes per login and per refresh on PostgreSQL, for docs/sizing.md (bench/sizing.ts).
import pg from 'pg';
import { ADMIN_PASSWORD, LOGIN_USERS, type Server } from './run-servers.ts';
import type { Measured } from './sizing-report.ts';

/** PostgreSQL: rows written and transactions committed per login and per refresh (pg_stat_database). */
export async function writesPer(s: Server, dbUrl: string, adminUrl: string): Promise<Measured['writes']> {
  const name = new URL(dbUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Backends report their counts when they exit: ending the database's connections (the service
  // reconnects) makes every count so far visible.
  const snapshot = async () => {
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
    await new Promise((r) => setTimeout(r, 300));
    await admin.query('select pg_stat_clear_snapshot()');
    const { rows } = await admin.query(
      'select xact_commit, tup_inserted + tup_updated + tup_deleted as written from pg_stat_database where datname = $1',
      [name],
    );
    const [row] = rows as Array<{ xact_commit: string; written: string }>;
    return { commits: Number(row?.xact_commit), written: Number(row?.written), at: performance.now() };
  };
  const per = async (n: number, act: () => Promise<void>) => {
    const a = await snapshot();
    for (let i = 0; i < n; i++) await act();
    const b = await snapshot();
    const idleA = await snapshot();
    await new Promise((r) => setTimeout(r, b.at - a.at));
    const idleB = await snapshot();
    // The idle interval of the same length: the LISTEN connection's heartbeats, the snapshots.
    const idleCommits = idleB.commits - idleA.commits;
    return { commits: (b.commits - a.commits - idleCommits) / n, rows: (b.written - a.written) / n };
  };
  try {
    const login = () =>
      fetch(`${s.base}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: LOGIN_USERS[0], password: ADMIN_PASSWORD }),
      }).then((r) => r.arrayBuffer().then(() => undefined));
    const perLogin = await per(20, login);
    let [token = ''] = await refreshTokens(s, 1);
    const perRefresh = await per(40, async () => {
      const res = await fetch(`${s.base}/api/v1/refresh-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: token }),
      });
      token = ((await res.json()) as { refresh_token: string }).refresh_token;
    });
    return { login: perLogin, refresh: perRefresh };
  } finally {
    await admin.end();
  }
}

/** A fresh refresh token for each of the first `n` login users. */
export async function refreshTokens(s: Server, n: number): Promise<string[]> {
  const tokens: string[] = [];
  for (const email of LOGIN_USERS.slice(0, n)) {
    const res = await fetch(`${s.base}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: ADMIN_PASSWORD }),
    });
    tokens.push(((await res.json()) as { refresh_token: string }).refresh_token);
  }
  return tokens;
}
