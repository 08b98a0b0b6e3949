import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { quoted } from '../quoted.ts';
import { booleanWord, ConfigError, commaList, type Env, type EnvReader } from './reader.ts';

/*
 * The settings that take more than a range check: each reads its variables, checks them together
 * and says which one is wrong. loadConfig (src/platform/config.ts) calls them in a fixed order, so the
 * first problem reported stays the same whatever else is wrong.
 */

export function databaseSettings(r: EnvReader): { databaseUrl: string; databaseListenUrl: string | null } {
  const databaseUrl = r.str('DATABASE_URL') ?? 'sqlite:./data/gatehouse.db';
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…');
  }
  // LISTEN needs a session connection: behind PgBouncer in transaction mode, point this at the
  // server directly (or a session-mode pool); `off` where the engine has no LISTEN/NOTIFY.
  const listenRaw = r.str('DATABASE_LISTEN_URL');
  const postgres = !databaseUrl.startsWith('sqlite:');
  let databaseListenUrl: string | null = postgres ? databaseUrl : null;
  if (listenRaw !== undefined && postgres) {
    if (listenRaw.toLowerCase() === 'off') databaseListenUrl = null;
    else if (/^postgres(ql)?:\/\//.test(listenRaw)) databaseListenUrl = listenRaw;
    else throw new ConfigError('DATABASE_LISTEN_URL must be postgres://… or off');
  }
  return { databaseUrl, databaseListenUrl };
}

export function adminAccount(
  r: EnvReader,
  env: Env,
): { adminEmail: string | null; adminPassword: string | null } {
  const adminEmail = r.str('ADMIN_EMAIL') ?? null;
  // Not trimmed: spaces at either end may be part of a password.
  const adminPassword =
    env.ADMIN_PASSWORD === undefined || env.ADMIN_PASSWORD === '' ? null : env.ADMIN_PASSWORD;
  if (adminEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(adminEmail)) {
    throw new ConfigError('ADMIN_EMAIL must be an email address');
  }
  if ((adminEmail === null) !== (adminPassword === null)) {
    throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  return { adminEmail, adminPassword };
}

/** A mailed link's template: it must hold `{token}` and make a clickable http(s) URL, or it would fail at send time. */
export function linkTemplate(r: EnvReader, name: string, fallback: string): string {
  const template = r.str(name) ?? fallback;
  if (!template.includes('{token}')) throw new ConfigError(`${name} must contain {token}`);
  r.url(name, template.replaceAll('{token}', 'token'), ['http:', 'https:']);
  return template;
}

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

export function oidcProvider(r: EnvReader): {
  issuer: string | null;
  clientId: string | null;
  clientSecret: string | null;
  allowedAlgs: string[];
} {
  const issuer = r.str('OIDC_ISSUER');
  const clientId = r.str('OIDC_CLIENT_ID');
  if ((issuer === undefined) !== (clientId === undefined)) {
    throw new ConfigError('OIDC_ISSUER and OIDC_CLIENT_ID must be set together');
  }
  if (issuer !== undefined) r.url('OIDC_ISSUER', issuer, ['http:', 'https:']);
  const allowedAlgs = commaList(r.str('OIDC_ALLOWED_ALGS') ?? 'RS256,ES256,EdDSA,PS256');
  for (const alg of allowedAlgs) {
    if (!SAFE_OIDC_ALGS.includes(alg)) {
      throw new ConfigError(
        `OIDC_ALLOWED_ALGS may list only ${SAFE_OIDC_ALGS.join(', ')}; "${alg}" is not allowed`,
      );
    }
  }
  if (allowedAlgs.length === 0) throw new ConfigError('OIDC_ALLOWED_ALGS must name at least one algorithm');
  // The issuer is kept as given: `iss` is compared exactly, and some providers end theirs with a slash.
  // docs/api.md §18: the `default` provider's redirect flow; without it the flow is a public client (PKCE).
  const clientSecret = r.str('OIDC_CLIENT_SECRET') ?? null;
  if (clientSecret !== null && issuer === undefined) {
    throw new ConfigError('OIDC_CLIENT_SECRET is set but OIDC_ISSUER is not');
  }
  return { issuer: issuer ?? null, clientId: clientId ?? null, clientSecret, allowedAlgs };
}

/**
 * SMTP_CA_FILE: a mail server with a private or self-signed certificate is verified against this
 * PEM file (its CA, or the certificate itself) rather than switched to trusting anyone.
 */
export function smtpSettings(r: EnvReader): { smtpUrl: string | null; smtpCa: string | null } {
  const smtpUrl = r.str('SMTP_URL') ?? null;
  if (smtpUrl !== null) r.url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const path = r.str('SMTP_CA_FILE');
  if (path === undefined) return { smtpUrl, smtpCa: null };
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
  return { smtpUrl, smtpCa: pem };
}

/**
 * Browsers send `Origin` as scheme://host[:port], lower-case, no slash: stored the same way, so
 * `https://App.example.com/` matches instead of silently never matching.
 */
export function corsOrigins(r: EnvReader): string[] {
  return commaList(r.str('CORS_ORIGINS') ?? '').map((origin) => {
    const parsed = new URL(r.url('CORS_ORIGINS', origin, ['http:', 'https:']));
    if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '') {
      throw new ConfigError(
        `CORS_ORIGINS entries must be origins like https://app.example.com, got ${quoted(origin)}`,
      );
    }
    return parsed.origin;
  });
}

export function timeouts(r: EnvReader): { requestTimeoutMs: number; headersTimeoutMs: number } {
  const requestTimeoutMs = r.int('REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  const headersTimeoutMs = r.int('HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), 100, 600_000);
  // Node refuses a request deadline shorter than the headers deadline; say so at start instead.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (${headersTimeoutMs} > ${requestTimeoutMs})`,
    );
  }
  return { requestTimeoutMs, headersTimeoutMs };
}

export function isKey32(value: string): boolean {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return false;
  return Buffer.from(value, 'base64').length === 32;
}

/** A name shown in mails and authenticators: one line, bounded. */
export function singleLineName(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value) || value.length > 64) {
    throw new ConfigError('WEBAUTHN_RP_NAME must be one line of at most 64 characters');
  }
  return value;
}

/**
 * WEBAUTHN_RP_ID defaults to PUBLIC_URL's host, WEBAUTHN_ORIGINS to its origin. Every origin must be
 * the RP ID's host or a subdomain of it (WebAuthn would refuse every ceremony otherwise). Whether
 * the RP ID is an IP address is checked only when `passkeys` is enabled (src/modules/passkeys/).
 */
export function webauthnSettings(r: EnvReader, publicUrl: string): { rpId: string; origins: string[] } {
  const rpIdGiven = r.str('WEBAUTHN_RP_ID') ?? new URL(publicUrl).hostname;
  const rpId = rpIdGiven.toLowerCase().replace(/^\[|\]$/g, '');
  if (!/^[a-z0-9.:-]+$/.test(rpId) || rpId.length > 253) {
    throw new ConfigError(
      `WEBAUTHN_RP_ID must be a domain name such as example.com, got ${quoted(rpIdGiven)}`,
    );
  }
  const origins = commaList(r.str('WEBAUTHN_ORIGINS') ?? new URL(publicUrl).origin).map((origin) => {
    const parsed = URL.parse(origin);
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.pathname !== '/') {
      throw new ConfigError(
        `WEBAUTHN_ORIGINS entries must be origins like https://app.example.com, got ${quoted(origin)}`,
      );
    }
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw new ConfigError(
        `WEBAUTHN_ORIGINS entry "${origin}" is not on WEBAUTHN_RP_ID "${rpId}" or a subdomain of it`,
      );
    }
    return parsed.origin;
  });
  if (origins.length === 0) throw new ConfigError('WEBAUTHN_ORIGINS must name at least one origin');
  return { rpId, origins };
}

/** Hosted pages' branding: a logo (an https URL or a path on this service) and an accent colour. */
export function branding(r: EnvReader): { logoUrl: string | null; accentColor: string | null } {
  const logoUrl = r.str('APP_LOGO_URL') ?? null;
  if (logoUrl !== null && !logoUrl.startsWith('/')) r.url('APP_LOGO_URL', logoUrl, ['https:']);
  if (logoUrl !== null && (/^\/\//.test(logoUrl) || /[\s"'<>]/.test(logoUrl))) {
    throw new ConfigError('APP_LOGO_URL must be an https:// URL or a path starting with a single /');
  }
  const accentColor = r.str('APP_ACCENT_COLOR') ?? null;
  if (accentColor !== null && !/^#[0-9a-fA-F]{6}$/.test(accentColor)) {
    throw new ConfigError(`APP_ACCENT_COLOR must be a colour like #1f6feb, got ${quoted(accentColor)}`);
  }
  return { logoUrl, accentColor };
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: true/false, or the proxies' addresses and CIDR ranges (e.g. `10.0.0.0/8,loopback`). */
export function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined) return false;
  const word = booleanWord(raw.toLowerCase());
  if (word !== undefined) return word;
  const entries = commaList(raw);
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
