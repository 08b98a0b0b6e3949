import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  createModuleState,
  followModuleNotifications,
  MODULES_CHANNEL,
} from '../../src/kernel/module-state.ts';
import { MODULES } from '../../src/kernel/registry.ts';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { startListener } from '../../src/platform/db/notifications.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const base = process.env.TEST_DATABASE_URL;
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

/** Resolves once `check` holds, polling every 20 ms; fails after `attempts` polls. */
async function eventually(check: () => boolean | Promise<boolean>, what: string, attempts = 500) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`never happened: ${what}`);
}

describe('LISTEN/NOTIFY [postgres]', { skip: base ? false : 'needs TEST_DATABASE_URL' }, () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let admin: pg.Client;
  const notify = (channel: string, payload: string) =>
    admin.query('select pg_notify($1, $2)', [channel, payload]);

  before(async () => {
    database = await createTestDatabase('postgres');
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await proxy.close();
    await database.drop();
  });

  it('hears notifications, and reconnects after its backend is terminated', async () => {
    const heard: string[] = [];
    let connects = 0;
    const listener = startListener({
      connectionString: database.url,
      channel: 'gh_test_terminate',
      onNotification: (p) => heard.push(p),
      onConnect: () => connects++,
      log,
      minBackoffMs: 10,
    });
    try {
      await eventually(() => listener.connected, 'first connect');
      await notify('gh_test_terminate', 'one');
      await notify('gh_test_other_channel', 'ignored');
      await eventually(() => heard.includes('one'), 'notification one');

      const killed = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and query like 'LISTEN%' and pid <> pg_backend_pid()`,
      );
      assert.equal(killed.rowCount, 1);
      await eventually(() => connects >= 2 && listener.connected, 'reconnect');
      await notify('gh_test_terminate', 'two');
      await eventually(() => heard.includes('two'), 'notification two');
      assert.deepEqual(heard, ['one', 'two']);
    } finally {
      await listener.stop();
    }
    assert.equal(listener.connected, false);
  });

  it('keeps retrying while the database is unreachable and comes back with it', async () => {
    const heard: string[] = [];
    let connects = 0;
    const listener = startListener({
      connectionString: proxy.rewrite(database.url),
      channel: 'gh_test_outage',
      onNotification: (p) => heard.push(p),
      onConnect: () => connects++,
      log,
      minBackoffMs: 10,
      maxBackoffMs: 100,
    });
    try {
      await eventually(() => listener.connected, 'first connect');
      await proxy.cut('refuse');
      await eventually(() => !listener.connected, 'disconnect seen');
      await notify('gh_test_outage', 'lost'); // sent while the listener is away: gone for good
      await proxy.restore();
      await eventually(() => connects >= 2 && listener.connected, 'reconnect after outage');
      await notify('gh_test_outage', 'after');
      await eventually(() => heard.includes('after'), 'notification after the outage');
      assert.deepEqual(heard, ['after']);
    } finally {
      await listener.stop();
    }
  });

  it('notices a silently dead connection through its heartbeat', async () => {
    let connects = 0;
    const listener = startListener({
      connectionString: proxy.rewrite(database.url),
      channel: 'gh_test_blackhole',
      onNotification: () => {},
      onConnect: () => connects++,
      log,
      heartbeatMs: 100,
      minBackoffMs: 10,
      maxBackoffMs: 100,
    });
    try {
      await eventually(() => listener.connected, 'first connect');
      await proxy.cut('blackhole');
      await eventually(() => !listener.connected, 'heartbeat failure seen');
      await proxy.restore();
      await eventually(() => connects >= 2 && listener.connected, 'reconnect after the drop');
    } finally {
      await listener.stop();
    }
  });

  it('a module toggle is announced on commit, once, with the module name', async () => {
    const t: TestApp = await buildTestApp('postgres');
    const listen = new pg.Client({ connectionString: t.databaseUrl });
    await listen.connect();
    try {
      const heard: string[] = [];
      listen.on('notification', (m) => {
        if (m.channel === MODULES_CHANNEL) heard.push(m.payload ?? '');
      });
      await listen.query(`LISTEN ${MODULES_CHANNEL}`);
      await t.ctx.modules.set('idp', false);
      await eventually(() => heard.length > 0, 'toggle announcement');
      assert.deepEqual(heard, ['idp']);
      assert.equal(t.ctx.modules.isEnabled('idp'), false);
    } finally {
      await listen.end();
      await t.destroy();
    }
  });

  it('a toggle by one instance reaches another through the notification alone (no polling)', async () => {
    const t = await buildTestApp('postgres');
    // A second module state on the same database with nothing but the notification follower: no
    // polling timer exists here, so only NOTIFY can carry the change.
    const follower = await createModuleState(t.ctx.db, 'A', MODULES);
    let connects = 0;
    const stop = followModuleNotifications(follower, t.databaseUrl, log);
    try {
      // Its first-connect re-read happens after LISTEN is in effect; wait for that connection.
      await eventually(async () => {
        const r = await admin.query(
          `select count(*)::int as n from pg_stat_activity where datname = $1 and query like 'LISTEN%'`,
          [new URL(t.databaseUrl).pathname.slice(1)],
        );
        connects = r.rows[0]?.n ?? 0;
        return connects === 2; // the app's own follower and this one
      }, 'both listeners up');
      const changes: boolean[] = [];
      follower.onChange(() => changes.push(follower.isEnabled('invitations')));
      await t.ctx.modules.set('invitations', true);
      await eventually(() => follower.isEnabled('invitations'), 'the follower sees the toggle');
      await t.ctx.modules.set('invitations', false);
      await eventually(() => !follower.isEnabled('invitations'), 'the follower sees it switched back');
      assert.deepEqual(changes, [true, false]);
    } finally {
      await stop();
      await t.destroy();
    }
  });
  it('DATABASE_LISTEN_URL=off: no LISTEN connection, no NOTIFY, toggles still arrive by polling', async () => {
    const a = await buildTestApp('postgres', { env: { DATABASE_LISTEN_URL: 'off' } });
    const b = await a.restart();
    const listen = new pg.Client({ connectionString: a.databaseUrl });
    await listen.connect();
    try {
      const heard: string[] = [];
      listen.on('notification', (m) => heard.push(m.payload ?? ''));
      await listen.query(`LISTEN ${MODULES_CHANNEL}`);
      const listeners = await admin.query(
        `select count(*)::int as n from pg_stat_activity where datname = $1 and query like 'LISTEN%'`,
        [new URL(a.databaseUrl).pathname.slice(1)],
      );
      assert.equal(listeners.rows[0]?.n, 1, 'only this test listens');
      await a.ctx.modules.set('idp', false);
      // The 2 s poll carries it; docs/api.md §2 allows 5 s.
      await eventually(() => !b.ctx.modules.isEnabled('idp'), 'B polls the toggle in', 250);
      assert.deepEqual(heard, []);
    } finally {
      await listen.end();
      await b.close();
      await a.destroy();
    }
  });
});

describe('DATABASE_LISTEN_URL', () => {
  const pgUrl = 'postgres://gatehouse@db.internal:6432/gatehouse';
  it('defaults to DATABASE_URL on PostgreSQL and is unused on SQLite', () => {
    assert.equal(loadConfig({ DATABASE_URL: pgUrl }).databaseListenUrl, pgUrl);
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseListenUrl, null);
  });
  it('takes a direct server URL, or off', () => {
    const direct = 'postgres://gatehouse@db.internal:5432/gatehouse';
    assert.equal(loadConfig({ DATABASE_URL: pgUrl, DATABASE_LISTEN_URL: direct }).databaseListenUrl, direct);
    assert.equal(loadConfig({ DATABASE_URL: pgUrl, DATABASE_LISTEN_URL: 'off' }).databaseListenUrl, null);
    assert.throws(
      () => loadConfig({ DATABASE_URL: pgUrl, DATABASE_LISTEN_URL: 'mysql://x' }),
      (err: Error) => err instanceof ConfigError && /DATABASE_LISTEN_URL/.test(err.message),
    );
  });
});
