import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { type Database, isDatabaseUnavailable, openDatabase } from '../../src/platform/db/database.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

// The failures PostgreSQL and the network really produce, as pg reports them through Kysely: each
// must be recognised as "database unavailable" (503), never an internal error (500).
const base = process.env.TEST_DATABASE_URL;

/** Runs `fn`, which must fail, and returns the error. */
async function failure(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof Error, `expected an Error, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

describe('PostgreSQL failure shapes [postgres]', { skip: base ? false : 'needs TEST_DATABASE_URL' }, () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let admin: pg.Client;
  const opened: Database[] = [];
  const open = (options: { statementTimeoutMs?: number; poolMax?: number } = {}) => {
    const d = openDatabase(proxy.rewrite(database.url), { statementTimeoutMs: 1000, ...options });
    opened.push(d);
    return d;
  };
  const terminate = (marker: string) =>
    admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query like $1 and pid <> pg_backend_pid()`,
      [`%${marker}%`],
    );

  before(async () => {
    database = await createTestDatabase('postgres');
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    for (const d of opened) await d.close().catch(() => {});
    await admin.end();
    await proxy.close();
    await database.drop();
  });

  it('applies DATABASE_POOL_MAX and the statement timeout to every pooled connection', async () => {
    const d = open({ poolMax: 3, statementTimeoutMs: 1234 });
    assert.equal(d.pool?.options.max, 3);
    const shown = await Promise.all(
      [1, 2, 3].map(() => sql<{ statement_timeout: string }>`show statement_timeout`.execute(d.db)),
    );
    for (const r of shown) assert.equal(r.rows[0]?.statement_timeout, '1234ms');
    const err = await failure(() => sql`select pg_sleep(3)`.execute(d.db));
    assert.equal((err as { code?: string }).code, '57014');
    assert.ok(isDatabaseUnavailable(err));
  });

  it('backend terminated during a query: 57P01 admin_shutdown, and the process survives', async () => {
    const d = open();
    const pending = failure(() => sql`select pg_sleep(5), 'probe-57p01'`.execute(d.db));
    while ((await terminate('probe-57p01')).rowCount === 0) await new Promise((r) => setTimeout(r, 20));
    const err = await pending;
    assert.equal((err as { code?: string }).code, '57P01');
    assert.ok(isDatabaseUnavailable(err));
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(d.db)).rows[0]?.one, 1);
  });

  it('backend terminated between the statements of a transaction: connection terminated', async () => {
    const d = open();
    const err = await failure(() =>
      d.db.transaction().execute(async (trx) => {
        await sql`select 'probe-between'`.execute(trx);
        await terminate('probe-between');
        await new Promise((r) => setTimeout(r, 100));
        await sql`select 1`.execute(trx);
      }),
    );
    assert.ok(isDatabaseUnavailable(err), `not recognised: ${err.message}`);
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(d.db)).rows[0]?.one, 1);
  });

  it('server unreachable (connection refused): ECONNREFUSED', async () => {
    const d = open();
    await proxy.cut('refuse');
    try {
      const err = await failure(() => sql`select 1`.execute(d.db));
      assert.equal((err as { code?: string }).code, 'ECONNREFUSED');
      assert.ok(isDatabaseUnavailable(err));
    } finally {
      await proxy.restore();
    }
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(d.db)).rows[0]?.one, 1);
  });

  it('connection accepted then closed: Connection terminated unexpectedly', async () => {
    const d = open();
    await proxy.cut('reset');
    try {
      const err = await failure(() => sql`select 1`.execute(d.db));
      assert.match(err.message, /Connection terminated unexpectedly/);
      assert.ok(isDatabaseUnavailable(err));
    } finally {
      await proxy.restore();
    }
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(d.db)).rows[0]?.one, 1);
  });

  it('network silently dropped: connect timeout for new connections, read deadline for open ones', async () => {
    const fresh = open();
    const warm = open({ poolMax: 1 });
    await sql`select 1`.execute(warm.db); // leaves one idle connection through the proxy
    await proxy.cut('blackhole');
    try {
      const connectErr = await failure(() => sql`select 1`.execute(fresh.db));
      assert.match(connectErr.message, /timeout/i);
      assert.ok(isDatabaseUnavailable(connectErr), `not recognised: ${connectErr.message}`);
      const readErr = await failure(() => sql`select 1`.execute(warm.db));
      assert.match(readErr.message, /no answer from the database/);
      assert.ok(isDatabaseUnavailable(readErr));
    } finally {
      await proxy.restore();
    }
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(warm.db)).rows[0]?.one, 1);
  });
  it('transient conflicts (deadlock, serialization failure, read-only server) are 503, not 500', async () => {
    await admin.query('create table if not exists conflict_probe (id int primary key, v int)');
    await admin.query('insert into conflict_probe values (1, 0), (2, 0) on conflict do nothing');
    const one = new pg.Client({ connectionString: database.url });
    const two = new pg.Client({ connectionString: database.url });
    await Promise.all([one.connect(), two.connect()]);
    try {
      // Deadlock: each holds the row the other wants.
      await one.query('begin');
      await two.query('begin');
      await one.query('update conflict_probe set v = v + 1 where id = 1');
      await two.query('update conflict_probe set v = v + 1 where id = 2');
      const results = await Promise.allSettled([
        one.query('update conflict_probe set v = v + 1 where id = 2'),
        two.query('update conflict_probe set v = v + 1 where id = 1'),
      ]);
      const deadlock = results.find((r) => r.status === 'rejected');
      assert.ok(deadlock && deadlock.status === 'rejected');
      assert.equal((deadlock.reason as { code?: string }).code, '40P01');
      assert.ok(isDatabaseUnavailable(deadlock.reason));
      await Promise.all([one.query('rollback'), two.query('rollback')]);

      // Serialization failure: two serializable transactions that read what the other writes.
      await one.query('begin isolation level serializable');
      await two.query('begin isolation level serializable');
      await one.query('select sum(v) from conflict_probe');
      await two.query('select sum(v) from conflict_probe');
      await one.query('update conflict_probe set v = 10 where id = 1');
      await two.query('update conflict_probe set v = 20 where id = 2');
      await one.query('commit');
      const err = await failure(() => two.query('commit'));
      assert.equal((err as { code?: string }).code, '40001');
      assert.ok(isDatabaseUnavailable(err));

      await one.query('begin read only');
      const readOnly = await failure(() => one.query('update conflict_probe set v = 0'));
      assert.equal((readOnly as { code?: string }).code, '25006');
      assert.ok(isDatabaseUnavailable(readOnly));
      await one.query('rollback');
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  });

  it('ordinary errors stay what they are (not 503)', async () => {
    const d = open();
    const err = await failure(() => sql`select * from no_such_table`.execute(d.db));
    assert.equal((err as { code?: string }).code, '42P01');
    assert.equal(isDatabaseUnavailable(err), false);
  });
});
