import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../http/app.ts';
import { ensureFirstAdmin } from '../modules/auth/first-admin.ts';
import { startWebhookWorker } from '../modules/webhooks/delivery.ts';
import { type Config, ConfigError } from '../platform/config.ts';
import { checkConnection } from '../platform/db/connection-check.ts';
import { migrateAtStart, openDatabase } from '../platform/db/database.ts';
import { loadLanguages } from '../platform/i18n/index.ts';
import { closeContext, createContext } from './context.ts';
import type { AppContext } from './context.types.ts';
import { checkPreconditionsBeforeOpen, checkPreconditionsWithSwitches } from './module-availability.ts';
import { loadModules, startJobs } from './registry.ts';

/** A running service's parts, for main.ts and the end-to-end tests. */
export interface Service {
  app: FastifyInstance;
  ctx: AppContext;
  close(): Promise<void>;
}

/** module needs → open database → check it answers → migrate → context → first admin → app. Does not listen. */
export async function startService(config: Config, log: Logger): Promise<Service> {
  if (!config.publicUrlSet && !config.databaseUrl.startsWith('sqlite:')) {
    // The default issuer names this instance's port, so two instances on one PostgreSQL database
    // would refuse each other's tokens: PUBLIC_URL is required there. Checked here, not in loadConfig: the other
    // commands (migrate, users …) issue no tokens and need no PUBLIC_URL.
    throw new ConfigError(
      'PUBLIC_URL must be set when DATABASE_URL is PostgreSQL: every instance sharing the database must name the same issuer',
    );
  }
  // Every module's needs, before anything is opened or written: a refused start leaves no migrated
  // database and no printed admin password behind it (docs/configuration.md).
  const readSwitches = checkPreconditionsBeforeOpen(config);
  // LOCALES_DIR and DEFAULT_LOCALE, checked before anything is opened (one line, docs/languages.md).
  loadLanguages(config);
  const database = openDatabase(config.databaseUrl, {
    poolMax: config.databasePoolMax,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    onPoolError: (err) => log.warn({ err }, 'database connection lost'),
  });
  try {
    // A refused connection or a wrong password is named as such, not as a failing migration.
    await checkConnection(database, config.databaseUrl);
    if (readSwitches) await checkPreconditionsWithSwitches(config, database.db);
    const { applied, newer } = await migrateAtStart(database.db);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    if (newer.length > 0) log.warn({ newer }, 'database migrated by a newer version; serving it unmigrated');
    const ctx = await createContext(config, database, log);
    if (config.smtpUrl === null) {
      // Once, at start: a mail to a person (an invitation, a reset link) silently never arriving is
      // the surprise; the log transport itself logs each mail at info.
      log.warn(
        'SMTP_URL is not set: mail Gatehouse sends (invitations, password resets, address confirmations, security notices) goes to this log, not to anyone; set SMTP_URL to send it (docs/email.md)',
      );
    }
    await ensureFirstAdmin(ctx);
    const modules = loadModules(ctx);
    const app = await buildApp(ctx, modules);
    // The background jobs of every module (the module switches' refresh among them), from now on.
    startJobs(ctx, modules);
    // Closed before the database (closers run newest first); pending mail goes out from here on.
    ctx.closers.push(ctx.mail.outbox.start());
    // Webhook deliveries (docs/api.md §19): pending ones go out from here on, while the module is on.
    // Like the outbox a worker of its own, not a scheduler job (it leases attempts and renews the
    // leases); started and stopped here only.
    const webhooks = startWebhookWorker(ctx);
    ctx.closers.push(() => webhooks.stop());
    let closed = false;
    return {
      app,
      ctx,
      async close() {
        if (closed) return;
        closed = true;
        await app.close();
        await closeContext(ctx);
        await database.close();
      },
    };
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
}

/**
 * The one start line a person reads: the address where the pages work (PUBLIC_URL: cookies and
 * passkeys belong to one origin) and the console, then the socket address beside it (behind a proxy
 * or in a container the two differ, and the operator checks both). `address` is what the server
 * listens on; with PORT=0 and no PUBLIC_URL it supplies the port.
 */
export function readyLine(ctx: AppContext, address: string): string {
  const { config } = ctx;
  const base =
    config.port === 0 && !config.publicUrlSet
      ? `http://localhost:${new URL(address).port}`
      : config.publicUrl;
  const adminPage = ctx.modules.isEnabled('console') ? ` (console: ${base}/admin)` : '';
  return `Gatehouse is ready at ${base}${adminPage}, listening on ${new URL(address).host}`;
}
