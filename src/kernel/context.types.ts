import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PasswordHasher } from '../identity/passwords/passwords.ts';
import type { SignInListeners } from '../identity/sign-in/listeners.ts';
import type { AccessTokens } from '../identity/tokens/access-tokens.ts';
import type { SecretsKeySource } from '../identity/tokens/secrets-key.ts';
import type { SessionReader } from '../identity/tokens/session-cache.ts';
import type { KeyStore } from '../identity/tokens/signing-keys.ts';
import type { AppMetrics } from '../platform/app-metrics.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';
import type { DB } from '../platform/db/schema.ts';
import type { HealthCheck } from '../platform/health-check.ts';
import type { MailTransport } from '../platform/mail/mailer.ts';
import type { Outbox } from '../platform/mail/outbox.ts';
import type { ModuleState } from './module-state.ts';
import type { Scheduler } from './scheduler.ts';

/**
 * Everything a module needs, built once per process (or per test app) by createContext
 * (src/kernel/context.ts): config, database, services. A leaf: it names the platform, the identity
 * core's toolkits and the kernel's own parts, never a feature and never the module list, so every
 * file may take it without closing a cycle. A module's own state is not here: its `start(ctx)`
 * returns it (src/kernel/module.ts).
 */
export interface AppContext {
  readonly config: Config;
  readonly database: Database;
  readonly db: Kysely<DB>;
  readonly log: Logger;
  readonly modules: ModuleState;
  readonly keys: KeyStore;
  readonly accessTokens: AccessTokens;
  readonly passwords: PasswordHasher;
  /** The key that seals second-factor and client secrets at rest (SECRETS_KEY, or one made on first use). */
  readonly secrets: SecretsKeySource;
  /** The session and user behind a verified token (the guard's read; cached on PostgreSQL). */
  readonly sessions: SessionReader;
  /** Mail goes out only through the outbox; its worker is started by startService. */
  readonly mail: { readonly transport: MailTransport; readonly outbox: Outbox };
  /** Listeners of the sign-in pipeline: features acting on every sign-in (src/identity/sign-in/listeners.ts). */
  readonly signIn: SignInListeners;
  readonly startedAt: number;
  /** The app's Prometheus metrics (`GET /metrics`); every way in counts its logins there. */
  readonly metrics: AppMetrics;
  /** Optional dependency checks (mailer, idp); each reports `disabled` until its module wires it. */
  readonly healthChecks: Map<string, () => Promise<HealthCheck>>;
  /**
   * The one scheduler of background jobs (src/kernel/scheduler.ts): the modules' jobs, started with the
   * service (`startJobs` in registry.ts), each reported in `/health/detailed`.
   */
  readonly jobs: Scheduler;
  /** Called on shutdown, in reverse order of registration (timers, workers, listeners). */
  readonly closers: Array<() => Promise<void> | void>;
}
