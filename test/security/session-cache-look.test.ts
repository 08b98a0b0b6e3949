import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { createSessionReader, type SessionReader } from '../../src/identity/tokens/session-cache.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// On SQLite the session cache learns of another process's commits (the CLI's) from PRAGMA
// data_version. Reading it costs two file-lock system calls, so the reads that wait at the same
// time share one look, taken after each of them began (src/identity/tokens/session-cache.ts, lookAfter).

describe('session cache on SQLite: the look at data_version', () => {
  let t: TestApp;
  let looks = 0;
  let reader: SessionReader;
  before(async () => {
    t = await buildTestApp('sqlite');
    const { database } = t.ctx;
    const { authWrites } = database;
    const otherWriters = authWrites.otherWriters;
    assert.ok(otherWriters, 'SQLite reports other writers');
    // The app's own handle, with every look at data_version counted.
    const counted: Database = {
      ...database,
      authWrites: {
        get version() {
          return authWrites.version;
        },
        get open() {
          return authWrites.open;
        },
        otherWriters: () => {
          looks++;
          return otherWriters();
        },
      },
    };
    reader = createSessionReader(counted, { listenUrl: null, size: 100, log: createLogger('silent') });
  });
  after(async () => {
    await reader.close();
    await t.destroy();
  });

  const sessionOf = async () => {
    const { access_token } = await sessionFor(t, await createUser(t));
    return (await t.ctx.accessTokens.verify(access_token)).sid;
  };

  it('data-version-per-read: reads waiting at the same time share one look', async () => {
    const sid = await sessionOf();
    assert.ok(await reader.read(sid));
    looks = 0;
    const found = await Promise.all(Array.from({ length: 20 }, () => reader.read(sid)));
    assert.ok(found.every((f) => f?.session.id === sid));
    assert.equal(looks, 1);
  });

  it('a commit by another connection after a read began is seen by that read', async () => {
    const sid = await sessionOf();
    assert.equal((await reader.read(sid))?.session.revoked_at, null);
    // Cached now; the next read begins, then another connection (as the CLI would) revokes.
    const pending = reader.read(sid);
    const other = new SQLite(t.databaseUrl.slice('sqlite:'.length));
    try {
      other.prepare('update sessions set revoked_at = ? where id = ?').run(Date.now(), sid);
    } finally {
      other.close();
    }
    assert.notEqual((await pending)?.session.revoked_at, null);
  });
});
