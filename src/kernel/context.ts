import type { Logger } from 'pino';
import { createPasswordHasher } from '../identity/passwords/passwords.ts';
import { createSignInListeners } from '../identity/sign-in/listeners.ts';
import { createAccessTokens } from '../identity/tokens/access-tokens.ts';
import { createSecretsKeySource } from '../identity/tokens/secrets-key.ts';
import { createSessionReader } from '../identity/tokens/session-cache.ts';
import { createKeyStore } from '../identity/tokens/signing-keys.ts';
import { createAppMetrics } from '../modules/core/index.ts';
import { MAX_RESOURCE_TTL_S } from '../modules/oauth/index.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';
import { createMailTransport } from '../platform/mail/mailer.ts';
import { createOutbox } from '../platform/mail/outbox.ts';
import type { AppContext } from './context.types.ts';
import { createModuleState, followModuleNotifications } from './module-state.ts';
import { MODULES } from './registry.ts';
import { createScheduler } from './scheduler.ts';

/** Builds the context on an open, migrated database. */
export async function createContext(config: Config, database: Database, log: Logger): Promise<AppContext> {
  const { db } = database;
  const modules = await createModuleState(db, config.apiForm, MODULES, {
    announce: database.dialect === 'postgres' && config.databaseListenUrl !== null,
  });
  const keys = await createKeyStore(db, {
    accessTokenTtlS: config.accessTokenTtlS,
    alg: config.accessTokenAlg,
    // Tokens for APIs (the oauth module, which may be switched on at any time) can outlive
    // Gatehouse's own: a key they were signed with stays published until the last one expires.
    longestTokenTtlS: MAX_RESOURCE_TTL_S,
  });
  const accessTokens = createAccessTokens(keys, {
    issuer: config.publicUrl,
    audience: config.publicUrl,
    clientId: config.accessTokenClientId,
    cacheSize: config.verifiedTokenCacheSize,
    ttlS: config.accessTokenTtlS,
    requireMfa: config.requireMfa,
  });
  const transport = createMailTransport({
    ...(config.smtpUrl ? { smtpUrl: config.smtpUrl } : {}),
    ...(config.smtpCa ? { smtpCa: config.smtpCa } : {}),
    from: config.mailFrom,
    logger: log,
  });
  const outbox = createOutbox({
    db,
    transport,
    log,
    maxAttempts: config.mailMaxAttempts,
    retryBaseMs: config.mailRetryBaseS * 1000,
  });
  const ctx: AppContext = {
    config,
    database,
    db,
    log,
    modules,
    keys,
    accessTokens,
    passwords: createPasswordHasher({
      maxConcurrent: config.passwordHashConcurrency ?? undefined,
      maxQueue: config.passwordHashQueue ?? undefined,
    }),
    secrets: createSecretsKeySource({ config, database, log }),
    sessions: createSessionReader(database, {
      listenUrl: config.databaseListenUrl,
      size: config.sessionCacheSize,
      log,
    }),
    mail: { transport, outbox },
    signIn: createSignInListeners(),
    startedAt: Date.now(),
    metrics: createAppMetrics({ db, database, log }),
    healthChecks: new Map([['mailer', () => outbox.health()]]),
    jobs: createScheduler(log),
    closers: [],
  };
  ctx.closers.push(
    () => ctx.sessions.close(),
    () => transport.close(),
    // Clears every job's timer and waits for the runs in progress.
    () => ctx.jobs.stop(),
  );
  if (database.dialect === 'postgres' && config.databaseListenUrl !== null) {
    ctx.closers.push(followModuleNotifications(modules, config.databaseListenUrl, log));
  }
  return ctx;
}

/** Runs the context's closers, newest first; errors are logged, not thrown. */
export async function closeContext(ctx: AppContext): Promise<void> {
  for (const close of [...ctx.closers].reverse()) {
    try {
      await close();
    } catch (err) {
      ctx.log.warn({ err }, 'error while closing');
    }
  }
}
