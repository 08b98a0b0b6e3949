// What webhooks cost (docs/webhooks.md): deliveries per second from the outbox to a receiver on
// 127.0.0.1 (signing, the guarded agent, the attempt's write), and what one subscribed endpoint adds
// to a sign-in's transaction (the event and its delivery row written with the change). The sign-in is
// measured without the password hash (argon2 costs the same either way), as wall time per call;
// then the whole `POST /api/v1/login` (through the app, password hash included), which is what a
// person signing in waits for.
//   node bench/webhooks.ts [database url, default a temporary SQLite file] [n = 1000] [rounds = 10]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/http/app.ts';
import { signIn } from '../src/identity/index.ts';
import { closeContext, createContext } from '../src/kernel/context.ts';
import { createOrPromoteAdmin } from '../src/modules/auth/first-admin.ts';
import { startWebhookWorker } from '../src/modules/webhooks/delivery.ts';
import { createWebhook } from '../src/modules/webhooks/webhooks.service.ts';
import { loadConfig } from '../src/platform/config.ts';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { createLogger } from '../src/platform/logger.ts';

const [url, count = '1000', roundCount = '10'] = process.argv.slice(2);
const n = Number(count);
const rounds = Number(roundCount);
const perRound = Math.max(1, Math.round(n / rounds));
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-webhooks-bench-'));
const databaseUrl = url || `sqlite:${join(dir, 'g.db')}`;

let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bench`;

const config = loadConfig({
  DATABASE_URL: databaseUrl,
  PUBLIC_URL: 'http://bench',
  API_FORM: 'full',
  SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
});
const database = openDatabase(config.databaseUrl);
await migrateToLatest(database.db);
const ctx = await createContext(config, database, createLogger('silent'));
const rows: string[] = [];
try {
  await createOrPromoteAdmin(ctx, 'bench@example.com', 'correct horse battery staple 42', 'bench');
  const user = await ctx.db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', 'bench@example.com')
    .executeTakeFirstOrThrow();
  const signInOnce = () =>
    ctx.db.transaction().execute((trx) =>
      signIn(ctx, trx, {
        user,
        client: { ip: null, userAgent: 'bench' },
        amr: ['pwd'],
        details: { method: 'password' },
      }),
    );
  const msPerSignIn = async () => {
    const started = performance.now();
    for (let i = 0; i < perRound; i++) await signInOnce();
    return (performance.now() - started) / perRound;
  };
  for (let i = 0; i < 100; i++) await signInOnce();
  // Short rounds alternate without and with the endpoint (switched by `enabled`), so load from
  // elsewhere on the machine falls on both alike; the median round of each is reported, and the
  // median of the per-pair ratios (each pair ran back to back).
  const hook = await createWebhook(
    ctx,
    { url: hookUrl, events: ['session.created'], enabled: false },
    { actor: { type: 'system' }, client: null },
  );
  const setEnabled = (on: boolean) =>
    ctx.db
      .updateTable('webhook_endpoints')
      .set({ enabled: on ? 1 : 0 })
      .where('id', '=', hook.id)
      .execute();
  const without: number[] = [];
  const withOne: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await setEnabled(false);
    without.push(await msPerSignIn());
    await setEnabled(true);
    withOne.push(await msPerSignIn());
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  };
  const a = median(without);
  const b = median(withOne);
  const pairRatio = median(withOne.map((w, i) => w / (without[i] as number)));
  rows.push(`| sign-in transaction, no endpoint | ${a.toFixed(3)} ms | 1.00 |`);
  rows.push(
    `| sign-in transaction, 1 subscribed endpoint | ${b.toFixed(3)} ms | ${(b / a).toFixed(2)} (pairs: ${pairRatio.toFixed(2)}) |`,
  );

  // The whole login, password hash included, in the same alternating rounds (fewer calls: each
  // spends one argon2id verification).
  const app = await buildApp(ctx);
  const perLoginRound = Math.max(1, Math.round(perRound / 10));
  const login = async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      payload: { email: 'bench@example.com', password: 'correct horse battery staple 42' },
    });
    if (res.statusCode !== 200) throw new Error(`login answered ${res.statusCode}`);
  };
  const msPerLogin = async () => {
    const started = performance.now();
    for (let i = 0; i < perLoginRound; i++) await login();
    return (performance.now() - started) / perLoginRound;
  };
  for (let i = 0; i < 5; i++) await login();
  const loginsWithout: number[] = [];
  const loginsWith: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await setEnabled(false);
    loginsWithout.push(await msPerLogin());
    await setEnabled(true);
    loginsWith.push(await msPerLogin());
  }
  await app.close();
  const la = median(loginsWithout);
  const lb = median(loginsWith);
  const loginPairs = median(loginsWith.map((w, i) => w / (loginsWithout[i] as number)));
  rows.push(`| POST /api/v1/login, no endpoint | ${la.toFixed(2)} ms | 1.00 |`);
  rows.push(
    `| POST /api/v1/login, 1 subscribed endpoint | ${lb.toFixed(2)} ms | ${(lb / la).toFixed(2)} (pairs: ${loginPairs.toFixed(2)}) |`,
  );

  // Every sign-in above queued a delivery: the worker drains the backlog.
  const backlog = rounds * (perRound + perLoginRound);
  const started = performance.now();
  const worker = startWebhookWorker(ctx);
  while (received < backlog) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  rows.push(`| deliveries to 127.0.0.1 (${backlog} queued) | ${(backlog / seconds).toFixed(0)} /s | |`);
} finally {
  await closeContext(ctx);
  await database.close();
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(
  `| ${database.dialect}, n = ${rounds * perRound} per side, ${rounds} rounds | figure | ratio |\n|---|---|---|\n${rows.join('\n')}\n`,
);
