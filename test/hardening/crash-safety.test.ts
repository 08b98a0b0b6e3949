import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { hashOpaqueToken } from '../../src/identity/tokens/opaque-tokens.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, PUBLIC_URL } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, type TestDialect } from '../helpers/databases.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

/*
 * Crash safety: SIGKILL the service in the middle of a burst of token refreshes (and user
 * creations, once POST /api/v1/users exists), restart it, and check that every write the API
 * acknowledged is there and (SQLite) that the database file passes its integrity check. SQLite runs
 * with synchronous=FULL in WAL mode (docs/security.md says why).
 */

const json = { 'content-type': 'application/json' };

/** One refresh chain: a session whose token is rotated again and again. */
interface Chain {
  /** Every refresh token the API handed out for the chain, in order (the first from login). */
  acknowledged: string[];
}

interface Burst {
  chains: Chain[];
  acknowledgedEmails: string[];
  env: Record<string, string>;
}

/** Logs in `chains` times, then refreshes each chain (and creates users) until SIGKILL. */
async function burstThenKill(
  svc: ServiceProcess,
  env: Record<string, string>,
  options: { chains: number; creators: number; killAfter: (b: Burst) => boolean },
): Promise<Burst> {
  const burst: Burst = { chains: [], acknowledgedEmails: [], env };
  let adminToken = '';
  for (let i = 0; i < options.chains; i++) {
    const login = await fetch(`${svc.url}/api/v1/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    assert.equal(login.status, 200);
    const tokens = (await login.json()) as { access_token: string; refresh_token: string };
    adminToken = tokens.access_token;
    burst.chains.push({ acknowledged: [tokens.refresh_token] });
  }
  let stop = false;
  let n = 0;
  const creator = async () => {
    while (!stop) {
      const email = `crash-${n++}@example.com`;
      try {
        const res = await fetch(`${svc.url}/api/v1/users`, {
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({ email }),
        });
        if (res.status === 201) burst.acknowledgedEmails.push(email);
        else await res.arrayBuffer();
      } catch {
        return; // the process is gone
      }
    }
  };
  const refresher = async (chain: Chain) => {
    while (!stop) {
      try {
        const res = await fetch(`${svc.url}/api/v1/refresh-token`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ refresh_token: chain.acknowledged.at(-1) }),
        });
        if (res.status !== 200) throw new Error(`refresh answered ${res.status}: ${await res.text()}`);
        chain.acknowledged.push(((await res.json()) as { refresh_token: string }).refresh_token);
      } catch (err) {
        if (stop) return;
        // Only the kill may end a chain: a refusal before it is a bug.
        if (err instanceof Error && err.message.startsWith('refresh answered')) throw err;
        return;
      }
    }
  };
  const failures: unknown[] = [];
  const workers = [...burst.chains.map(refresher), ...Array.from({ length: options.creators }, creator)].map(
    (worker) => worker.catch((err: unknown) => void failures.push(err)),
  );
  // Kill once enough writes are acknowledged (bounded: 10 s), a little after, mid-burst.
  const started = Date.now();
  while (!options.killAfter(burst) && Date.now() - started < 10_000)
    await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  await svc.kill();
  stop = true;
  await Promise.all(workers);
  assert.deepEqual(failures, [], 'no refresh was refused before the kill');
  return burst;
}

/** Checks the data after the kill; returns the figures. */
async function checkAfterKill(database: TestDatabase, dialect: TestDialect, burst: Burst) {
  if (dialect === 'sqlite') {
    const file = new SQLite(database.url.slice('sqlite:'.length));
    assert.equal(file.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(file.pragma('foreign_key_check'), []);
    file.close();
  }
  const { db, close } = openDatabase(database.url);
  try {
    let refreshesAcknowledged = 0;
    let refreshesFound = 0;
    for (const chain of burst.chains) {
      const issued = chain.acknowledged.slice(1); // the first came from login
      refreshesAcknowledged += issued.length;
      const rows = await db
        .selectFrom('refresh_tokens')
        .select(['token_hash', 'rotated_at'])
        .where('token_hash', 'in', chain.acknowledged.map(hashOpaqueToken))
        .execute();
      const byHash = new Map(rows.map((r) => [r.token_hash, r]));
      refreshesFound += issued.filter((token) => byHash.has(hashOpaqueToken(token))).length;
      // Each acknowledged token but the last was presented and acknowledged again: its rotation is kept too.
      for (const token of chain.acknowledged.slice(0, -1)) {
        assert.notEqual(
          byHash.get(hashOpaqueToken(token))?.rotated_at ?? null,
          null,
          'an acknowledged rotation was lost',
        );
      }
    }
    let usersFound = 0;
    if (burst.acknowledgedEmails.length > 0) {
      const found = await db
        .selectFrom('users')
        .select('email')
        .where('email', 'in', burst.acknowledgedEmails)
        .execute();
      usersFound = found.length;
    }
    return {
      refreshesAcknowledged,
      refreshesFound,
      usersAcknowledged: burst.acknowledgedEmails.length,
      usersFound,
    };
  } finally {
    await close();
  }
}

/** Restarts on the same data: the last acknowledged refresh token of every chain still works. */
async function restartAndRefresh(burst: Burst): Promise<void> {
  const again = await startServiceProcess(burst.env);
  try {
    for (const chain of burst.chains) {
      const res = await fetch(`${again.url}/api/v1/refresh-token`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ refresh_token: chain.acknowledged.at(-1) }),
      });
      assert.equal(res.status, 200, await res.text());
    }
  } finally {
    assert.equal(await again.stop(), 0);
  }
}

for (const dialect of DIALECTS) {
  describe(`crash safety [${dialect}]`, () => {
    const databases: TestDatabase[] = [];
    after(async () => {
      for (const d of databases) await d.drop();
    });

    async function start(): Promise<{
      svc: ServiceProcess;
      database: TestDatabase;
      env: Record<string, string>;
    }> {
      const database = await createTestDatabase(dialect);
      databases.push(database);
      // A wide grace window: when the kill falls between a rotation's commit and its answer, the
      // last acknowledged token was already rotated, and after the restart it must replay (not be reuse).
      const env = {
        DATABASE_URL: database.url,
        PUBLIC_URL,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        REFRESH_REUSE_GRACE_S: '300',
        LOG_LEVEL: 'warn',
      };
      return { svc: await startServiceProcess(env), database, env };
    }

    it('keeps every acknowledged refresh across a SIGKILL', async () => {
      const { svc, database, env } = await start();
      const burst = await burstThenKill(svc, env, {
        chains: 3,
        creators: 0,
        killAfter: (b) => b.chains.reduce((sum, c) => sum + c.acknowledged.length - 1, 0) >= 60,
      });
      const figures = await checkAfterKill(database, dialect, burst);
      console.log(
        `crash safety [${dialect}] refreshes: ${figures.refreshesAcknowledged} acknowledged, ${figures.refreshesFound} found after SIGKILL`,
      );
      assert.ok(figures.refreshesAcknowledged > 0, 'the burst acknowledged refreshes before the kill');
      assert.equal(figures.refreshesFound, figures.refreshesAcknowledged);
      await restartAndRefresh(burst);
    });

    it('keeps every acknowledged user creation (with refreshes) across a SIGKILL', async () => {
      const { svc, database, env } = await start();
      const burst = await burstThenKill(svc, env, {
        chains: 1,
        creators: 3,
        killAfter: (b) => b.acknowledgedEmails.length >= 40,
      });
      const figures = await checkAfterKill(database, dialect, burst);
      console.log(
        `crash safety [${dialect}] users: ${figures.usersAcknowledged} creations acknowledged, ${figures.usersFound} found; refreshes: ${figures.refreshesAcknowledged} acknowledged, ${figures.refreshesFound} found`,
      );
      assert.ok(figures.usersAcknowledged > 0, 'the burst acknowledged user creations before the kill');
      assert.equal(figures.usersFound, figures.usersAcknowledged);
      assert.equal(figures.refreshesFound, figures.refreshesAcknowledged);
      await restartAndRefresh(burst);
    });
  });
}
