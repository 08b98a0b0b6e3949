import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { findUserByEmail, insertUser, PASSWORD_LOGIN, revokeSession } from '../../src/identity/index.ts';
import { openSession } from '../../src/identity/sessions.ts';
import { type Service, startService } from '../../src/kernel/server.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, testEnv } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

// Two real Gatehouse processes on one PostgreSQL database, checked over HTTP only: whatever one
// instance changes, the other honours (docs/api.md §2 module toggles, §5 logout, throttling, rotation).
const base = process.env.TEST_DATABASE_URL;
// docs/api.md §2: a toggle reaches every instance within 5 s. Polled every 50 ms: 100 polls.
const TOGGLE_POLLS = 100;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | null;
}

/**
 * docs/api.md §16: another instance sees a revocation within 100 ms at p99 (measured by
 * test/scale/session-cache-instances.test.ts). The change is already committed when this is called;
 * verify-token is asked until it refuses or the bound has passed, and must refuse by then.
 */
async function refusedWithinBound(proc: ServiceProcess, token: string): Promise<Answer> {
  const deadline = Date.now() + 100;
  for (;;) {
    const res = await call(proc, 'GET', '/api/v1/verify-token', { token });
    if (res.status === 401 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function call(
  proc: ServiceProcess,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${proc.url}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
  };
}

const documented = async (proc: ServiceProcess): Promise<string[]> => {
  const index = await call(proc, 'GET', '/');
  return Object.keys((index.body?.documentation ?? {}) as Record<string, unknown>);
};

/** Whether an instance reports the module enabled (the `modules` map of its /health/detailed). */
async function moduleSeen(proc: ServiceProcess, name: string): Promise<boolean | undefined> {
  const health = await call(proc, 'GET', '/health/detailed');
  const modules = (health.body?.modules ?? {}) as Record<string, boolean>;
  return modules[name];
}

/** Polls an instance until it reports the module's state, within the 5 s of docs/api.md §2. */
async function eventuallySeen(proc: ServiceProcess, name: string, enabled: boolean): Promise<boolean> {
  for (let i = 0; i < TOGGLE_POLLS; i++) {
    if ((await moduleSeen(proc, name)) === enabled) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('two instances on one database [postgres]', {
  skip: base ? false : 'needs TEST_DATABASE_URL',
}, () => {
  let database: TestDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let helper: Service; // in-process on the same database: mints tokens, inserts users, revokes
  let adminToken: string;

  const login = (proc: ServiceProcess, email: string, password: string) =>
    call(proc, 'POST', '/api/v1/login', { body: { email, password } });

  before(async () => {
    database = await createTestDatabase('postgres');
    const env = {
      ...testEnv(database.url),
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      DATABASE_POOL_MAX: '5',
    };
    // Both start at once on the empty database: migrations, first signing key and first admin race.
    const started = await Promise.allSettled([startServiceProcess(env), startServiceProcess(env)]);
    for (const r of started)
      if (r.status === 'rejected') {
        await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : null)));
        throw r.reason;
      }
    [a, b] = started.map((r) => (r as PromiseFulfilledResult<ServiceProcess>).value) as [
      ServiceProcess,
      ServiceProcess,
    ];
    const config = loadConfig(testEnv(database.url, { LOG_LEVEL: 'silent' }));
    helper = await startService(config, createLogger('silent'));
    const admin = await findUserByEmail(helper.ctx.db, ADMIN_EMAIL);
    assert.ok(admin, 'the first admin exists');
    adminToken = (
      await openSession(helper.ctx, admin, { ip: '127.0.0.1', userAgent: 'test' }, PASSWORD_LOGIN)
    ).access_token;
  });

  after(async () => {
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    await helper?.close();
    await database?.drop();
    assert.deepEqual(codes, [0, 0], 'both instances shut down cleanly');
  });

  it('both instances came up together on the empty database with one first admin', async () => {
    const admins = await helper.ctx.db
      .selectFrom('users')
      .select('email')
      .where('role', '=', 'admin')
      .execute();
    assert.deepEqual(
      admins.map((u) => u.email),
      [ADMIN_EMAIL],
    );
    for (const proc of [a, b]) {
      const res = await call(proc, 'GET', '/api/v1/verify-token', { token: adminToken });
      assert.equal(res.status, 200, 'a token minted by a third instance verifies everywhere');
    }
  });

  it('a module toggle on A is seen on B within 5 s, and back', async () => {
    assert.equal(await moduleSeen(b, 'idp'), true);
    const off = await call(a, 'PUT', '/api/v1/admin/modules/idp', {
      token: adminToken,
      body: { enabled: false },
    });
    assert.equal(off.status, 200);
    assert.equal(off.body?.enabled, false);
    assert.ok(await eventuallySeen(b, 'idp', false), 'B reports idp disabled within 5 s');
    // Once the idp module declares endpoints, B's index and routing follow the same switch.
    if (((off.body?.endpoints as unknown[] | undefined) ?? []).length > 0) {
      assert.equal((await documented(b)).includes('idp'), false);
      const disabled = await call(b, 'GET', '/api/v1/idp/config');
      assert.equal(disabled.status, 404);
      assert.equal(disabled.body?.code, 'module_disabled');
    }

    const on = await call(b, 'PUT', '/api/v1/admin/modules/idp', {
      token: adminToken,
      body: { enabled: true },
    });
    assert.equal(on.status, 200);
    assert.ok(await eventuallySeen(a, 'idp', true), 'A reports idp enabled again within 5 s');
  });

  it('a session revoked through one instance fails verify-token on the other within the bound (docs/api.md §16)', async () => {
    const admin = await findUserByEmail(helper.ctx.db, ADMIN_EMAIL);
    assert.ok(admin);
    const session = await openSession(
      helper.ctx,
      admin,
      { ip: '127.0.0.1', userAgent: 'test' },
      PASSWORD_LOGIN,
    );
    for (const proc of [a, b]) {
      assert.equal(
        (await call(proc, 'GET', '/api/v1/verify-token', { token: session.access_token })).status,
        200,
      );
    }
    const sid = (await call(a, 'GET', '/api/v1/verify-token', { token: session.access_token })).body
      ?.session_id;
    assert.equal(typeof sid, 'string');
    await revokeSession(helper.ctx.db, String(sid), 'logout'); // from a third party: no instance caches sessions
    for (const proc of [b, a]) {
      const res = await refusedWithinBound(proc, session.access_token);
      assert.equal(res.status, 401);
      assert.equal(res.body?.code, 'session_revoked');
    }
  });

  it('logout on A: the access token fails verify-token on B within the bound (docs/api.md §16)', async () => {
    const tokens = await login(a, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(tokens.status, 200);
    const access = String(tokens.body?.access_token);
    const refresh = String(tokens.body?.refresh_token);
    assert.equal((await call(b, 'GET', '/api/v1/verify-token', { token: access })).status, 200);
    assert.equal((await call(a, 'POST', '/api/v1/logout', { token: access })).status, 204);
    const verify = await refusedWithinBound(b, access);
    assert.equal(verify.status, 401);
    assert.equal(verify.body?.code, 'session_revoked');
    const refreshed = await call(b, 'POST', '/api/v1/refresh-token', { body: { refresh_token: refresh } });
    assert.equal(refreshed.status, 401);
  });

  /** A user of its own with an open session (minted in-process), verified on both instances. */
  async function userWithSession(): Promise<{ id: string; token: string }> {
    const now = Date.now();
    const id = uuidv7();
    const email = `member-${id}@example.com`;
    await insertUser(helper.ctx.db, {
      id,
      email,
      name: 'Member',
      role: 'user',
      status: 'active',
      password_hash: null,
      email_verified: 1,
      created_at: now,
      updated_at: now,
      last_login_at: null,
      created_via: 'admin',
    });
    const user = await findUserByEmail(helper.ctx.db, email);
    assert.ok(user);
    const { access_token } = await openSession(
      helper.ctx,
      user,
      { ip: '127.0.0.1', userAgent: 'test' },
      PASSWORD_LOGIN,
    );
    for (const proc of [a, b]) {
      assert.equal((await call(proc, 'GET', '/api/v1/verify-token', { token: access_token })).status, 200);
    }
    return { id, token: access_token };
  }

  it('a user disabled on A: their token fails verify-token on B within the bound (docs/api.md §16)', async () => {
    const member = await userWithSession();
    const res = await call(a, 'PUT', `/api/v1/users/${member.id}`, {
      token: adminToken,
      body: { status: 'disabled' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const verify = await refusedWithinBound(b, member.token);
    assert.equal(verify.status, 401);
    assert.equal(verify.body?.code, 'session_revoked');
  });

  it('a user deleted on B: their token fails verify-token on A within the bound (docs/api.md §16)', async () => {
    const member = await userWithSession();
    const res = await call(b, 'DELETE', `/api/v1/users/${member.id}`, { token: adminToken });
    assert.equal(res.status, 204, JSON.stringify(res.body));
    const verify = await refusedWithinBound(a, member.token);
    assert.equal(verify.status, 401);
    assert.equal(verify.body?.code, 'session_revoked');
  });

  it('login throttling counts failures across A and B together', async () => {
    // A user of its own: locking out the admin from 127.0.0.1 would break the other tests.
    const email = `throttled-${uuidv7()}@example.com`;
    const password = 'a perfectly fine passphrase 77';
    const now = Date.now();
    await insertUser(helper.ctx.db, {
      id: uuidv7(),
      email,
      name: 'Throttled',
      role: 'user',
      status: 'active',
      password_hash: await helper.ctx.passwords.hash(password),
      email_verified: 1,
      created_at: now,
      updated_at: now,
      last_login_at: null,
      created_via: 'admin',
    });
    for (let i = 0; i < 5; i++) {
      const res = await login(i % 2 === 0 ? a : b, email, 'wrong password number one');
      assert.equal(res.status, 401, `failure ${i + 1} is still counted, not refused`);
      assert.equal(res.body?.code, 'invalid_credentials');
    }
    for (const proc of [b, a]) {
      const res = await login(proc, email, password);
      assert.equal(
        res.status,
        429,
        'the sixth attempt is refused on either instance, even with the right password',
      );
      assert.equal(res.body?.code, 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
  });

  it('a refresh-token rotation race between A and B: both 200 with the same successor', async () => {
    const tokens = await login(b, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(tokens.status, 200);
    const refresh = String(tokens.body?.refresh_token);
    const [fromA, fromB] = await Promise.all([
      call(a, 'POST', '/api/v1/refresh-token', { body: { refresh_token: refresh } }),
      call(b, 'POST', '/api/v1/refresh-token', { body: { refresh_token: refresh } }),
    ]);
    assert.equal(fromA.status, 200, JSON.stringify(fromA.body));
    assert.equal(fromB.status, 200, JSON.stringify(fromB.body));
    assert.equal(fromA.body?.refresh_token, fromB.body?.refresh_token, 'one successor, not two');
    assert.notEqual(fromA.body?.refresh_token, refresh);
    const sessions = await Promise.all([
      call(b, 'GET', '/api/v1/verify-token', { token: String(fromA.body?.access_token) }),
      call(a, 'GET', '/api/v1/verify-token', { token: String(fromB.body?.access_token) }),
    ]);
    for (const s of sessions) assert.equal(s.status, 200);
    assert.equal(sessions[0].body?.session_id, sessions[1].body?.session_id);
    // The successor works once more on either instance.
    const next = await call(a, 'POST', '/api/v1/refresh-token', {
      body: { refresh_token: String(fromB.body?.refresh_token) },
    });
    assert.equal(next.status, 200);
  });

  it('both processes survive their database connections being terminated, and recover', async () => {
    const killer = new pg.Client({ connectionString: base });
    await killer.connect();
    const name = new URL(database.url).pathname.slice(1);
    let killing = true;
    let kills = 0;
    const loop = (async () => {
      while (killing) {
        const r = await killer.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where datname = $1 and pid <> pg_backend_pid()`,
          [name],
        );
        kills += r.rowCount ?? 0;
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    try {
      for (let round = 0; round < 30; round++) {
        const answers = await Promise.all(
          [a, b].flatMap((proc) => [
            call(proc, 'GET', '/api/v1/admin/modules', { token: adminToken }),
            call(proc, 'GET', '/health/detailed'),
          ]),
        );
        for (const res of answers) assert.ok(res.status === 200 || res.status === 503, `got ${res.status}`);
      }
    } finally {
      killing = false;
      await loop;
      await killer.end();
    }
    assert.ok(kills > 0);
    assert.ok(a.alive() && b.alive(), 'neither process crashed');
    for (const proc of [a, b]) {
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        ok = (await call(proc, 'GET', '/health/detailed')).status === 200;
        if (!ok) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(ok, `${proc.url} recovered`);
      assert.equal((await call(proc, 'GET', '/api/v1/admin/modules', { token: adminToken })).status, 200);
    }
    // After the churn the toggle path still works (listeners reconnected, polling behind them).
    const on = await call(b, 'PUT', '/api/v1/admin/modules/invitations', {
      token: adminToken,
      body: { enabled: true },
    });
    assert.equal(on.status, 200);
    assert.ok(await eventuallySeen(a, 'invitations', true), 'A sees the toggle made on B after the churn');
  });
});
