import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startService } from '../../src/kernel/server.ts';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

// Issue 17.8: PUBLIC_URL (the tokens' issuer) defaulted to http://localhost:<PORT>, so two
// instances on one PostgreSQL database on different ports refused each other's tokens. Without
// PUBLIC_URL a PostgreSQL start now stops with one line naming it.
describe('PUBLIC_URL with PostgreSQL [postgres]', {
  skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL',
}, () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase('postgres');
  });
  after(() => database.drop());

  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: database.url,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    // As every test app: load shedding depends on the machine's load, not on what is tested here.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    ...extra,
  });

  it('two-instances-reject-each-others-tokens: a start without PUBLIC_URL is refused, naming it', async () => {
    await assert.rejects(startService(loadConfig(env({ PORT: '3101' })), createLogger('silent')), (err) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^PUBLIC_URL must be set/);
      return true;
    });
    const served = await runCli(['serve'], database.url, { PORT: '0', ADMIN_EMAIL, ADMIN_PASSWORD });
    assert.equal(served.code, 1, served.stdout);
    assert.equal(served.stderr.trim().split('\n').length, 1, served.stderr);
    assert.match(served.stderr, /^gatehouse: configuration error: PUBLIC_URL must be set/);
    // Commands that issue no tokens still run.
    const migrated = await runCli(['migrate'], database.url);
    assert.equal(migrated.code, 0, migrated.stderr);
  });

  it('two-instances-reject-each-others-tokens: with one PUBLIC_URL, two instances accept each other’s tokens', async () => {
    const config = (port: string) => loadConfig(env({ PORT: port, PUBLIC_URL: 'https://id.example.com' }));
    const a = await startService(config('3101'), createLogger('silent'));
    const b = await startService(config('3102'), createLogger('silent'));
    try {
      const login = await a.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      });
      assert.equal(login.statusCode, 200, login.body);
      const token = (JSON.parse(login.body) as { access_token: string }).access_token;
      const verify = await b.app.inject({
        url: '/api/v1/verify-token',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(verify.statusCode, 200, verify.body);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
