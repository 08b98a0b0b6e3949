import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';

// docs/api.md §10 and docs/deployment.md: instances started together on an empty PostgreSQL database
// make ONE first admin. Two processes, not two app objects: the race is between connections.
// (SQLite serves one process per file, test/app/serve-lock.test.ts.)
const skip = DIALECTS.includes('postgres') ? false : 'PostgreSQL only (TEST_DATABASE_URL)';

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

function generatedPasswords(output: string): string[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { generated_password?: string })
    .flatMap((l) => (l.generated_password ? [l.generated_password] : []));
}

describe('two instances starting on an empty PostgreSQL database', { skip }, () => {
  const databases: TestDatabase[] = [];
  const running: ServiceProcess[] = [];
  after(async () => {
    for (const svc of running) await svc.stop();
    for (const db of databases) await db.drop();
  });

  async function startTwo(extra: Record<string, string>): Promise<{ url: string; both: ServiceProcess[] }> {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    const env = {
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://localhost:3000',
      LOG_LEVEL: 'info',
      ...extra,
    };
    const both = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
    running.push(...both);
    return { url: database.url, both };
  }

  it('regression: both could make or re-password the first admin; one admin, one printed password, and it is the live one', async () => {
    const { url, both } = await startTwo({});
    const admins = await query<{ id: string; email: string }>(
      url,
      "select id, email from users where role = 'admin'",
    );
    assert.deepEqual(
      admins.map((a) => a.email),
      ['admin@example.com'],
    );
    const printed = both.flatMap((svc) => generatedPasswords(svc.output()));
    assert.equal(printed.length, 1, 'one instance prints the password; the other says another made it');
    // The printed password is the account's: it signs in (once, to set a new one: docs/auth.md).
    const res = await fetch(`${both[1]?.url}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@example.com', password: printed[0] }),
    });
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as { code?: string }).code, 'password_change_required');
    // Created once; never re-passworded by the system.
    const audit = await query<{ action: string; actor_type: string }>(
      url,
      'select action, actor_type from audit_log order by at, id',
    );
    assert.deepEqual(
      audit.filter((e) => e.action.startsWith('user.') || e.action.startsWith('password.')),
      [{ action: 'user.create', actor_type: 'system' }],
    );
  });

  it('with ADMIN_EMAIL: created once, never re-passworded by the second instance', async () => {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    const env = {
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://localhost:3000',
      LOG_LEVEL: 'info',
      ADMIN_EMAIL: 'root@race.test',
      ADMIN_PASSWORD: 'correct horse battery staple 42',
    };
    const both = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
    running.push(...both);
    const admins = await query<{ email: string }>(
      database.url,
      "select email from users where role = 'admin'",
    );
    assert.deepEqual(
      admins.map((a) => a.email),
      ['root@race.test'],
    );
    const audit = await query<{ action: string; details: string }>(
      database.url,
      "select action, details from audit_log where actor_type = 'system' order by at, id",
    );
    assert.deepEqual(
      audit.map((e) => e.action),
      ['user.create'],
      'created once; the second instance did not re-password it',
    );
    const logs = both.map((svc) => svc.output()).join('\n');
    assert.match(logs, /first admin created by another instance|first admin created from ADMIN_EMAIL/);
  });

  it('regression: two starts in one process (their awaits interleave) made the second re-password the first admin', async () => {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    const logs: [string[], string[]] = [[], []];
    const env = { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'info' };
    const apps: TestApp[] = await Promise.all(
      logs.map((logLines) => buildTestApp('postgres', { database, env, logLines })),
    );
    try {
      const printed = logs.flatMap((lines) => generatedPasswords(lines.join('\n')));
      assert.equal(printed.length, 1, 'one printed password');
      const audit = await query<{ action: string }>(
        database.url,
        "select action from audit_log where actor_type = 'system' order by at, id",
      );
      assert.deepEqual(
        audit.map((e) => e.action),
        ['user.create'],
      );
      const res = await apps[0]?.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'admin@example.com', password: printed[0] },
      });
      assert.equal(res?.statusCode, 403, res?.body);
    } finally {
      for (const app of apps) await app.close();
    }
  });
});
