import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parse as parseDotenv } from 'dotenv';

/** The two deployment forms of docs/api.md §2. */
/** docs/api.md §2: forms A and B as the seed specified; `FULL` (`API_FORM=full`) turns every optional module on but `registration`. */
export type ApiForm = 'A' | 'B' | 'FULL';

/** Validated, frozen configuration: docs/api.md §10 plus the operational settings documented in docs/configuration.md. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** PostgreSQL session connection for LISTEN/NOTIFY; null: polling only (DATABASE_LISTEN_URL=off). */
  readonly databaseListenUrl: string | null;
  readonly databasePoolMax: number;
  readonly databaseStatementTimeoutMs: number;
  readonly apiForm: ApiForm;
  readonly publicUrl: string;
  /** Whether PUBLIC_URL was given (the default names one port, so instances would disagree). */
  readonly publicUrlSet: boolean;
  readonly adminEmail: string | null;
  readonly adminPassword: string | null;
  readonly accessTokenTtlS: number;
  /** Signing algorithm of new access tokens (docs/api.md §14); every loaded key of any of them verifies. */
  readonly accessTokenAlg: 'ES256' | 'RS256' | 'EdDSA';
  /** The tokens' `client_id` claim (RFC 9068); defaults to the audience. */
  readonly accessTokenClientId: string;
  /** Verified access tokens remembered until their exp (0: off; bench A/B, docs/benchmarks.md). */
  readonly verifiedTokenCacheSize: number;
  readonly refreshTokenTtlS: number;
  readonly refreshReuseGraceS: number;
  /** Absolute session lifetime: refreshes slide a session's expiry, but never past login + this. */
  readonly sessionMaxLifetimeS: number;
  readonly invitationTtlS: number;
  readonly inviteUrlTemplate: string;
  readonly passwordMinLength: number;
  readonly loginFailuresPerAddressPerMin: number;
  /** Password hashes running at once (null: the libuv threadpool size) and allowed to wait. */
  readonly passwordHashConcurrency: number | null;
  readonly passwordHashQueue: number | null;
  readonly oidc: {
    readonly issuer: string | null;
    readonly clientId: string | null;
    readonly allowedAlgs: readonly string[];
    readonly autoProvision: boolean;
    readonly linkByEmail: boolean;
    /** How long the discovery document and the key set are reused before a refetch. */
    readonly cacheTtlS: number;
    /** Minimum time between key set refetches triggered by an unknown `kid`. */
    readonly jwksCooldownS: number;
    /** Timeout of each request to the provider. */
    readonly httpTimeoutMs: number;
    /** Oldest `iat` accepted: an ID token is exchanged right after it is issued (issue 17.9). */
    readonly maxTokenAgeS: number;
  };
  readonly smtpUrl: string | null;
  /** PEM certificates (SMTP_CA_FILE) trusted for the SMTP server's TLS, instead of the public CAs. */
  readonly smtpCa: string | null;
  readonly mailFrom: string;
  readonly mailMaxAttempts: number;
  readonly mailRetryBaseS: number;
  readonly corsOrigins: readonly string[];
  /**
   * Whose X-Forwarded-For to believe: false (nobody), true (every hop: the left-most address, which a
   * client can forge when the proxy appends), or a comma list of proxy addresses/CIDRs for Fastify.
   */
  readonly trustProxy: boolean | string;
  readonly logLevel: string;
  readonly metricsToken: string | null;
  /** The product name in pages and mails (APP_NAME). */
  readonly appName: string;
  /** Hosted pages' branding (docs/pages.md): an optional logo (https URL or a path) and accent colour. */
  readonly pages: { readonly logoUrl: string | null; readonly accentColor: string | null };
  /** `METRICS_PUBLIC=true`: serve `/metrics` without a token (docs/api.md §10). */
  readonly metricsPublic: boolean;
  readonly auditRetentionDays: number;
  /** Slow clients: a whole request must arrive within requestTimeoutMs, its headers within headersTimeoutMs. */
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Nice value for libuv's pool threads, where argon2 runs (Linux; 0 leaves them alone). */
  readonly workerNice: number;
  /** Load shedding (docs/benchmarks.md): over any limit, requests other than /health get 503. 0 = off. */
  readonly pressure: {
    readonly maxEventLoopDelayMs: number;
    /** null: 90% of the V8 heap limit. */
    readonly maxHeapUsedMb: number | null;
    readonly maxRssMb: number;
  };
}

/** A configuration problem: its message is the one line printed before the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const SAFE_OIDC_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Reads `.env` from the working directory (if any) under the real environment, which wins. */
export function readEnvironment(cwd = process.cwd(), env: Env = process.env): Env {
  const file = `${cwd}/.env`;
  const fromFile = existsSync(file) ? parseDotenv(readFileSync(file)) : {};
  return { ...fromFile, ...env };
}

/** Validates the environment once and returns a frozen Config; throws ConfigError naming the variable. */
export function loadConfig(env: Env): Config {
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return def;
    if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const raw = str(name)?.toLowerCase();
    if (raw === undefined) return def;
    if (['true', '1', 'yes', 'on'].includes(raw)) return true;
    if (['false', '0', 'no', 'off'].includes(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  };
  const url = (name: string, value: string, protocols: string[]): string => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(`${name} must be a URL, got "${redactUrl(value)}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
    }
    return value;
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';

  const databaseUrl = str('DATABASE_URL') ?? 'sqlite:./data/gatehouse.db';
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…');
  }

  // LISTEN needs a session connection: behind PgBouncer in transaction mode, point this at the
  // server directly (or a session-mode pool); `off` where the engine has no LISTEN/NOTIFY.
  const listenRaw = str('DATABASE_LISTEN_URL');
  const postgres = !databaseUrl.startsWith('sqlite:');
  let databaseListenUrl: string | null = postgres ? databaseUrl : null;
  if (listenRaw !== undefined && postgres) {
    if (listenRaw.toLowerCase() === 'off') databaseListenUrl = null;
    else if (/^postgres(ql)?:\/\//.test(listenRaw)) databaseListenUrl = listenRaw;
    else throw new ConfigError('DATABASE_LISTEN_URL must be postgres://… or off');
  }

  const form = (str('API_FORM') ?? 'A').toUpperCase();
  if (form !== 'A' && form !== 'B' && form !== 'FULL') {
    throw new ConfigError(`API_FORM must be A, B or full, got "${form}"`);
  }

  const publicUrl = url('PUBLIC_URL', str('PUBLIC_URL') ?? `http://localhost:${port}`, [
    'http:',
    'https:',
  ]).replace(/\/+$/, '');

  const accessTokenAlg = str('ACCESS_TOKEN_ALG') ?? 'ES256';
  if (accessTokenAlg !== 'ES256' && accessTokenAlg !== 'RS256' && accessTokenAlg !== 'EdDSA') {
    throw new ConfigError(`ACCESS_TOKEN_ALG must be ES256, RS256 or EdDSA, got "${accessTokenAlg}"`);
  }

  const adminEmail = str('ADMIN_EMAIL') ?? null;
  const adminPassword =
    env.ADMIN_PASSWORD === undefined || env.ADMIN_PASSWORD === '' ? null : env.ADMIN_PASSWORD;
  if (adminEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(adminEmail)) {
    throw new ConfigError('ADMIN_EMAIL must be an email address');
  }
  if ((adminEmail === null) !== (adminPassword === null)) {
    throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }

  // The hosted invitation page (docs/api.md §10, §15); a team's own front end by setting the template.
  const inviteUrlTemplate = str('INVITE_URL_TEMPLATE') ?? `${publicUrl}/account/invitation/{token}`;
  if (!inviteUrlTemplate.includes('{token}')) {
    throw new ConfigError('INVITE_URL_TEMPLATE must contain {token}');
  }
  // The link goes into mail as a clickable http(s) URL; anything else would fail at send time.
  url('INVITE_URL_TEMPLATE', inviteUrlTemplate.replaceAll('{token}', 'token'), ['http:', 'https:']);

  const oidcIssuer = str('OIDC_ISSUER');
  const oidcClientId = str('OIDC_CLIENT_ID');
  if ((oidcIssuer === undefined) !== (oidcClientId === undefined)) {
    throw new ConfigError('OIDC_ISSUER and OIDC_CLIENT_ID must be set together');
  }
  if (oidcIssuer !== undefined) url('OIDC_ISSUER', oidcIssuer, ['http:', 'https:']);
  const allowedAlgs = (str('OIDC_ALLOWED_ALGS') ?? 'RS256,ES256,EdDSA,PS256')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  for (const alg of allowedAlgs) {
    if (!SAFE_OIDC_ALGS.includes(alg)) {
      throw new ConfigError(
        `OIDC_ALLOWED_ALGS may list only ${SAFE_OIDC_ALGS.join(', ')}; "${alg}" is not allowed`,
      );
    }
  }
  if (allowedAlgs.length === 0) throw new ConfigError('OIDC_ALLOWED_ALGS must name at least one algorithm');

  const smtpUrl = str('SMTP_URL') ?? null;
  if (smtpUrl !== null) url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const smtpCa = readCaFile(str('SMTP_CA_FILE'), smtpUrl);

  // Browsers send `Origin` as scheme://host[:port], lower-case, no slash: stored the same way, so
  // `https://App.example.com/` matches instead of silently never matching.
  const corsOrigins = (str('CORS_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((origin) => {
      const parsed = new URL(url('CORS_ORIGINS', origin, ['http:', 'https:']));
      if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '') {
        throw new ConfigError(
          `CORS_ORIGINS entries must be origins like https://app.example.com, got "${origin}"`,
        );
      }
      return parsed.origin;
    });

  const mailFrom = str('MAIL_FROM') ?? 'Gatehouse <no-reply@localhost>';
  // `addr@host` or `Name <addr@host>`; no line breaks (it becomes a mail header).
  if (!/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(mailFrom)) {
    throw new ConfigError('MAIL_FROM must be an address like "Gatehouse <id@example.com>"');
  }

  const logLevel = (str('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const requestTimeoutMs = int('REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  const headersTimeoutMs = int('HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), 100, 600_000);
  // Node refuses a request deadline shorter than the headers deadline; say so at start instead.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (${headersTimeoutMs} > ${requestTimeoutMs})`,
    );
  }

  const appName = str('APP_NAME') ?? 'Gatehouse';
  // It becomes a page title and a mail header: one line of text, no markup-looking characters.
  if (appName.length > 60 || /[\p{Cc}<>]/u.test(appName)) {
    throw new ConfigError('APP_NAME must be one line of at most 60 characters without < or >');
  }
  const logoUrl = str('APP_LOGO_URL') ?? null;
  if (logoUrl !== null && !logoUrl.startsWith('/')) url('APP_LOGO_URL', logoUrl, ['https:']);
  if (logoUrl !== null && (/^\/\//.test(logoUrl) || /[\s"'<>]/.test(logoUrl))) {
    throw new ConfigError('APP_LOGO_URL must be an https:// URL or a path starting with a single /');
  }
  const accentColor = str('APP_ACCENT_COLOR') ?? null;
  if (accentColor !== null && !/^#[0-9a-fA-F]{6}$/.test(accentColor)) {
    throw new ConfigError(`APP_ACCENT_COLOR must be a colour like #1f6feb, got "${accentColor}"`);
  }

  const config: Config = {
    port,
    host,
    databaseUrl,
    databaseListenUrl,
    databasePoolMax: int('DATABASE_POOL_MAX', 10, 1, 1000),
    databaseStatementTimeoutMs: int('DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 600_000),
    apiForm: form,
    publicUrl,
    publicUrlSet: str('PUBLIC_URL') !== undefined,
    adminEmail,
    adminPassword,
    accessTokenTtlS: int('ACCESS_TOKEN_TTL_S', 900, 1, 86_400),
    accessTokenAlg,
    accessTokenClientId: str('ACCESS_TOKEN_CLIENT_ID') ?? publicUrl,
    verifiedTokenCacheSize: int('VERIFIED_TOKEN_CACHE_SIZE', 10_000, 0, 1_000_000),
    refreshTokenTtlS: int('REFRESH_TOKEN_TTL_S', 2_592_000, 60, 31_536_000),
    refreshReuseGraceS: int('REFRESH_REUSE_GRACE_S', 10, 0, 300),
    sessionMaxLifetimeS: int('SESSION_MAX_LIFETIME_S', 7_776_000, 60, 315_360_000),
    invitationTtlS: int('INVITATION_TTL_S', 604_800, 1, 31_536_000),
    inviteUrlTemplate,
    passwordMinLength: int('PASSWORD_MIN_LENGTH', 15, 8, 256),
    loginFailuresPerAddressPerMin: int('LOGIN_FAILURES_PER_ADDRESS_PER_MIN', 30, 1, 100_000),
    passwordHashConcurrency: str('PASSWORD_HASH_CONCURRENCY')
      ? int('PASSWORD_HASH_CONCURRENCY', 4, 1, 1024)
      : null,
    passwordHashQueue: str('PASSWORD_HASH_QUEUE') ? int('PASSWORD_HASH_QUEUE', 16, 0, 100_000) : null,
    oidc: {
      // Kept as given: `iss` is compared exactly, and some providers end theirs with a slash.
      issuer: oidcIssuer ?? null,
      clientId: oidcClientId ?? null,
      allowedAlgs,
      autoProvision: bool('OIDC_AUTO_PROVISION', true),
      linkByEmail: bool('OIDC_LINK_BY_EMAIL', true),
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
    corsOrigins,
    trustProxy: trustProxy(str('TRUST_PROXY')),
    logLevel,
    metricsToken: str('METRICS_TOKEN') ?? null,
    appName,
    pages: { logoUrl, accentColor },
    metricsPublic: bool('METRICS_PUBLIC', false),
    auditRetentionDays: int('AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    requestTimeoutMs,
    headersTimeoutMs,
    workerNice: int('WORKER_NICE', 10, 0, 19),
    pressure: {
      maxEventLoopDelayMs: int('PRESSURE_MAX_EVENT_LOOP_DELAY_MS', 200, 0, 60_000),
      maxHeapUsedMb:
        str('PRESSURE_MAX_HEAP_USED_MB') === undefined
          ? null
          : int('PRESSURE_MAX_HEAP_USED_MB', 0, 0, 1_048_576),
      maxRssMb: int('PRESSURE_MAX_RSS_MB', 0, 0, 1_048_576),
    },
  };
  return deepFreeze(config);
}

/**
 * SMTP_CA_FILE: a mail server with a private or self-signed certificate is verified against this
 * PEM file (its CA, or the certificate itself) rather than switched to trusting anyone.
 */
function readCaFile(path: string | undefined, smtpUrl: string | null): string | null {
  if (path === undefined) return null;
  if (smtpUrl === null) throw new ConfigError('SMTP_CA_FILE is set but SMTP_URL is not');
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable');
    throw new ConfigError(`SMTP_CA_FILE cannot be read: ${path}: ${why}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`SMTP_CA_FILE must hold PEM certificates (-----BEGIN CERTIFICATE-----): ${path}`);
  }
  return pem;
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: true/false, or the proxies' addresses and CIDR ranges (e.g. `10.0.0.0/8,loopback`). */
function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    const named = PROXY_RANGE_NAMES.includes(entry.toLowerCase());
    if (!named && (family === 0 || !prefixOk || extra !== undefined)) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false or a comma list of proxy addresses/CIDRs (or loopback, linklocal, uniquelocal); "${entry}" is none of these`,
      );
    }
  }
  if (entries.length === 0) return false;
  return entries.join(',');
}

/** Hides the password of a URL, for messages and logs. */
export function redactUrl(value: string): string {
  return value.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

function deepFreeze<T extends object>(obj: T): T {
  for (const v of Object.values(obj)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(obj);
}
