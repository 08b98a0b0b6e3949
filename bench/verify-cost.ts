// What verifying an access token costs next to the rest of authenticating it, per algorithm, in one
// process (CPU time, which other load on the machine moves far less than requests per second):
// jose's jwtVerify alone, and the guard's whole authenticateToken (verify + session and user rows).
// The first is the most a verified-token cache could save on a request that reaches the rows.
//   node bench/verify-cost.ts [database url, default a temporary SQLite file] [n = 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthenticator } from '../src/http/guard.ts';
import { PASSWORD_LOGIN } from '../src/identity/index.ts';
import { openSession } from '../src/identity/sessions.ts';
import { createSessionReader } from '../src/identity/tokens/session-cache.ts';
import { closeContext, createContext } from '../src/kernel/context.ts';
import { createOrPromoteAdmin } from '../src/modules/auth/first-admin.ts';
import { loadConfig } from '../src/platform/config.ts';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { createLogger } from '../src/platform/logger.ts';

const [url, count = '2000'] = process.argv.slice(2);
const n = Number(count);
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-verify-cost-'));
const databaseUrl = url ?? `sqlite:${join(dir, 'g.db')}`;

/** CPU microseconds per call of fn, after a warm-up. */
async function cpuUs(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) await fn();
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const rows: string[] = [];
for (const alg of ['ES256', 'EdDSA', 'RS256']) {
  const config = loadConfig({ DATABASE_URL: databaseUrl, PUBLIC_URL: 'http://bench', ACCESS_TOKEN_ALG: alg });
  const database = openDatabase(config.databaseUrl);
  await migrateToLatest(database.db);
  const ctx = await createContext(config, database, createLogger('silent'));
  try {
    await createOrPromoteAdmin(ctx, 'bench@example.com', 'correct horse battery staple 42', 'bench');
    const user = await ctx.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'bench@example.com')
      .executeTakeFirstOrThrow();
    const { access_token } = await openSession(ctx, user, { ip: null, userAgent: 'bench' }, PASSWORD_LOGIN);
    const verify = await cpuUs(() => ctx.accessTokens.verify(access_token));
    // The guard's read without its cache: the rows are read every time, as on a cache miss.
    const uncached = createSessionReader(ctx.database, { listenUrl: null, size: 0, log: ctx.log });
    const authenticate = createAuthenticator(ctx.accessTokens, uncached, ctx.config.requireMfa);
    const whole = await cpuUs(() => authenticate(access_token));
    rows.push(
      `| ${database.dialect} | ${alg} | ${verify.toFixed(1)} | ${whole.toFixed(1)} | ${((100 * verify) / whole).toFixed(0)}% |`,
    );
  } finally {
    await closeContext(ctx);
    await database.close();
  }
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `| database | alg | jwtVerify µs CPU | authenticateToken µs CPU | verify share |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
