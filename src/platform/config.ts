import { existsSync, readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import { deepFreeze, type Env, type EnvReader, envReader } from './config/reader.ts';
import {
  adminAccount,
  branding,
  corsOrigins,
  databaseSettings,
  isKey32,
  linkTemplate,
  oidcProvider,
  singleLineName,
  smtpSettings,
  timeouts,
  trustProxy,
  webauthnSettings,
} from './config/sections.ts';
import { tokenHookSettings } from './config/token-hook.ts';
import type { Config } from './config/types.ts';
import { quoted } from './quoted.ts';

export { ConfigError, type Env, redactUrl } from './config/reader.ts';
export type { ApiForm, Config, RequireMfa, TokenHookSettings } from './config/types.ts';

/** APP_NAME's limit (docs/configuration.md, docs/email.md; test/app/docs-match-code.test.ts). */
export const APP_NAME_MAX_LENGTH = 80;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads `.env` from the working directory (if any) under the real environment, which wins. */
export function readEnvironment(cwd = process.cwd(), env: Env = process.env): Env {
  return { ...readEnvFile(cwd), ...env };
}

/** The variables of `.env` in `cwd` alone ({} without one). */
export function readEnvFile(cwd = process.cwd()): Env {
  const file = `${cwd}/.env`;
  return existsSync(file) ? parseDotenv(readFileSync(file)) : {};
}

/**
 * Validates the environment once and returns a frozen Config; throws one ConfigError naming every
 * wrong variable, one a line, so an operator fixes them all after one failed start. The variables
 * are checked in a fixed order, so the first line does not depend on what else is wrong.
 */
export function loadConfig(env: Env): Config {
  const r = envReader(env);
  const { str, int, bool, url, fail, attempt } = r;
  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';
  const { databaseUrl, databaseListenUrl } = attempt(() => databaseSettings(r), {
    databaseUrl: 'sqlite::memory:',
    databaseListenUrl: null,
  });

  const formGiven = str('API_FORM') ?? 'A';
  const form = oneOf(formGiven.toUpperCase(), ['A', 'B', 'FULL'] as const, () =>
    fail(`API_FORM must be A, B or full, got ${quoted(formGiven)}`),
  );

  const localUrl = `http://localhost:${port}`;
  const publicUrl = attempt(
    () => url('PUBLIC_URL', str('PUBLIC_URL') ?? localUrl, ['http:', 'https:']),
    localUrl,
  ).replace(/\/+$/, '');

  const algGiven = str('ACCESS_TOKEN_ALG') ?? 'ES256';
  const accessTokenAlg = oneOf(algGiven, ['ES256', 'RS256', 'EdDSA'] as const, () =>
    fail(`ACCESS_TOKEN_ALG must be ES256, RS256 or EdDSA, got ${quoted(algGiven)}`),
  );
  const { adminEmail, adminPassword } = attempt(() => adminAccount(r, env), {
    adminEmail: null,
    adminPassword: null,
  });

  // Mailed links default to the hosted pages (docs/api.md §10, §15); a team's own front end by
  // setting the template.
  const inviteUrlTemplate = linkTemplate(r, 'INVITE_URL_TEMPLATE', `${publicUrl}/account/invitation/{token}`);
  const resetUrlTemplate = linkTemplate(
    r,
    'RESET_URL_TEMPLATE',
    `${publicUrl}/account/reset-password/{token}`,
  );
  const verifyEmailUrlTemplate = linkTemplate(
    r,
    'VERIFY_EMAIL_URL_TEMPLATE',
    `${publicUrl}/account/verify-email/{token}`,
  );
  const appName = (str('APP_NAME') ?? 'Gatehouse').replace(/\s+/g, ' ');
  // It goes into mail subjects: no control characters, bounded.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(appName) || appName.length > APP_NAME_MAX_LENGTH) {
    fail(`APP_NAME must be at most ${APP_NAME_MAX_LENGTH} characters without control characters`);
  }

  const oidc = attempt(() => oidcProvider(r), {
    issuer: null,
    clientId: null,
    clientSecret: null,
    allowedAlgs: [],
  });
  const { smtpUrl, smtpCa } = attempt(() => smtpSettings(r), { smtpUrl: null, smtpCa: null });
  const cors = attempt(() => corsOrigins(r), []);

  const mailFrom = str('MAIL_FROM') ?? 'Gatehouse <no-reply@localhost>';
  // `addr@host` or `Name <addr@host>`; no line breaks (it becomes a mail header).
  if (!/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(mailFrom)) {
    fail('MAIL_FROM must be an address like "Gatehouse <id@example.com>"');
  }
  const logLevelGiven = str('LOG_LEVEL') ?? 'info';
  const logLevel = logLevelGiven.toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    fail(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${quoted(logLevelGiven)}`);
  }
  const { requestTimeoutMs, headersTimeoutMs } = attempt(() => timeouts(r), {
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
  });

  const secretsKey = str('SECRETS_KEY') ?? null;
  if (secretsKey !== null && !isKey32(secretsKey)) {
    fail('SECRETS_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)');
  }
  const webauthn = attempt(() => webauthnSettings(r, publicUrl), { rpId: 'localhost', origins: [] });
  const registrationGiven = (str('OAUTH_DYNAMIC_REGISTRATION') ?? 'off').toLowerCase();
  const dynamicRegistration = oneOf(registrationGiven, ['off', 'token', 'open'] as const, () =>
    fail(`OAUTH_DYNAMIC_REGISTRATION must be off, token or open, got ${quoted(registrationGiven)}`),
  );
  const pages = attempt(() => branding(r), { logoUrl: null, accentColor: null });
  const mfaGiven = (str('REQUIRE_MFA') ?? 'off').toLowerCase();
  const requireMfa = oneOf(mfaGiven, ['off', 'admins', 'all'] as const, () =>
    fail(`REQUIRE_MFA must be off, admins or all, got ${quoted(mfaGiven)}`),
  );
  const accessTokenTtlS = int('ACCESS_TOKEN_TTL_S', 900, 1, 86_400);
  const sessionIdleTimeoutS = str('SESSION_IDLE_TIMEOUT_S')
    ? int('SESSION_IDLE_TIMEOUT_S', 3600, 60, 31_536_000)
    : null;
  if (sessionIdleTimeoutS !== null && sessionIdleTimeoutS < accessTokenTtlS) {
    // A client in use refreshes once per access token; a shorter timeout would end busy sessions.
    fail(
      `SESSION_IDLE_TIMEOUT_S must be at least ACCESS_TOKEN_TTL_S (${accessTokenTtlS}): a session is used by refreshing its access token`,
    );
  }

  const webhooks = {
    allowHttp: bool('WEBHOOK_ALLOW_HTTP', false),
    allowPrivate: bool('WEBHOOK_ALLOW_PRIVATE', false),
  };
  const tokenHook = attempt(() => tokenHookSettings(r, webhooks), null);

  const config: Config = {
    port,
    host,
    databaseUrl,
    databaseListenUrl,
    databasePoolMax: int('DATABASE_POOL_MAX', 10, 1, 1000),
    databaseStatementTimeoutMs: int('DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 600_000),
    sessionCacheSize: int('SESSION_CACHE_SIZE', 10_000, 0, 1_000_000),
    apiForm: form,
    publicUrl,
    publicUrlSet: str('PUBLIC_URL') !== undefined,
    adminEmail,
    adminPassword,
    accessTokenTtlS,
    accessTokenAlg,
    accessTokenClientId: str('ACCESS_TOKEN_CLIENT_ID') ?? publicUrl,
    verifiedTokenCacheSize: int('VERIFIED_TOKEN_CACHE_SIZE', 10_000, 0, 1_000_000),
    sessionsPerUserMax: int('SESSIONS_PER_USER_MAX', 100, 1, 100_000),
    refreshTokenTtlS: int('REFRESH_TOKEN_TTL_S', 2_592_000, 60, 31_536_000),
    refreshReuseGraceS: int('REFRESH_REUSE_GRACE_S', 10, 0, 300),
    sessionMaxLifetimeS: int('SESSION_MAX_LIFETIME_S', 7_776_000, 60, 315_360_000),
    sessionIdleTimeoutS,
    requireMfa,
    invitationTtlS: int('INVITATION_TTL_S', 604_800, 1, 31_536_000),
    inviteUrlTemplate,
    passwordMinLength: int('PASSWORD_MIN_LENGTH', 15, 8, 256),
    passwordBreachedCheck: bool('PASSWORD_BREACHED_CHECK', true),
    passwordResetTtlS: int('PASSWORD_RESET_TTL_S', 1800, 60, 604_800),
    emailLinkTtlS: int('EMAIL_LINK_TTL_S', 86_400, 60, 2_592_000),
    emailSigninTtlS: int('EMAIL_SIGNIN_TTL_S', 600, 60, 3600),
    requireVerifiedEmail: bool('REQUIRE_VERIFIED_EMAIL', false),
    resetUrlTemplate,
    verifyEmailUrlTemplate,
    appName,
    loginFailuresPerAddressPerMin: int('LOGIN_FAILURES_PER_ADDRESS_PER_MIN', 30, 1, 100_000),
    passwordHashConcurrency: str('PASSWORD_HASH_CONCURRENCY')
      ? int('PASSWORD_HASH_CONCURRENCY', 4, 1, 1024)
      : null,
    passwordHashQueue: str('PASSWORD_HASH_QUEUE') ? int('PASSWORD_HASH_QUEUE', 16, 0, 100_000) : null,
    oidc: {
      ...oidc,
      autoProvision: bool('OIDC_AUTO_PROVISION', true),
      linkByEmail: bool('OIDC_LINK_BY_EMAIL', true),
      linkAdmins: bool('OIDC_LINK_ADMINS', false),
      cacheTtlS: int('OIDC_CACHE_TTL_S', 3600, 1, 86_400),
      jwksCooldownS: int('OIDC_JWKS_COOLDOWN_S', 30, 0, 3600),
      httpTimeoutMs: int('OIDC_HTTP_TIMEOUT_MS', 3000, 100, 60_000),
      maxTokenAgeS: int('OIDC_MAX_TOKEN_AGE_S', 600, 60, 86_400),
    },
    smtpUrl,
    smtpCa,
    mailFrom,
    mailMaxAttempts: int('MAIL_MAX_ATTEMPTS', 25, 1, 1000),
    mailRetryBaseS: int('MAIL_RETRY_BASE_S', 10, 1, 3600),
    corsOrigins: cors,
    trustProxy: attempt(() => trustProxy(str('TRUST_PROXY')), false),
    logLevel,
    metricsToken: str('METRICS_TOKEN') ?? null,
    pages,
    metricsPublic: bool('METRICS_PUBLIC', false),
    auditRetentionDays: int('AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    requestTimeoutMs,
    headersTimeoutMs,
    workerNice: int('WORKER_NICE', 10, 0, 19),
    secretsKey,
    oauth: {
      dynamicRegistration,
      registrationsPerAddressPerHour: int('OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR', 10, 1, 100_000),
    },
    webhooks,
    tokenHook,
    organizations: {
      selfService: bool('ORGANIZATIONS_SELF_SERVICE', false),
      creatorRoles: roleNames(r, 'ORGANIZATIONS_CREATOR_ROLES', ['owner']),
    },
    webauthn: {
      ...webauthn,
      rpName: attempt(() => singleLineName(str('WEBAUTHN_RP_NAME') ?? 'Gatehouse'), 'Gatehouse'),
    },
    pressure: {
      maxEventLoopDelayMs: int('PRESSURE_MAX_EVENT_LOOP_DELAY_MS', 200, 0, 60_000),
      maxHeapUsedMb:
        str('PRESSURE_MAX_HEAP_USED_MB') === undefined
          ? null
          : int('PRESSURE_MAX_HEAP_USED_MB', 0, 0, 1_048_576),
      maxRssMb: int('PRESSURE_MAX_RSS_MB', 0, 0, 1_048_576),
    },
  };
  r.done();
  return deepFreeze(config);
}

/** A comma-separated list of role names (docs/api.md §21's pattern, never `admin`/`user`); unset: `def`. */
function roleNames(r: EnvReader, name: string, def: readonly string[]): readonly string[] {
  const raw = r.str(name);
  if (raw === undefined) return def;
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  ];
  const bad = names.find((n) => !/^[a-z][a-z0-9_-]{0,62}$/.test(n) || n === 'admin' || n === 'user');
  if (bad !== undefined) r.fail(`${name} must list role names separated by commas, got ${quoted(bad)}`);
  return bad === undefined ? names : def;
}

/** `value` when it is one of `allowed`; else `refuse()` is called and the first allowed value used. */
function oneOf<T extends string>(value: string, allowed: readonly [T, ...T[]], refuse: () => void): T {
  const found = allowed.find((a) => a === value);
  if (found !== undefined) return found;
  refuse();
  return allowed[0];
}
