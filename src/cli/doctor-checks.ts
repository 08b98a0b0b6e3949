import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { ModuleName } from '../kernel/module-state.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/database.ts';
import { oneSealedTotpSecret, postgresClockMs } from './doctor.queries.ts';

/** One line of `gatehouse doctor`: ok, warn or fail, what was found, and the fix when not ok. */
export interface CheckResult {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly message: string;
  readonly fix?: string;
}

export const ok = (name: string, message: string): CheckResult => ({ name, status: 'ok', message });
export const warn = (name: string, message: string, fix: string): CheckResult => ({
  name,
  status: 'warn',
  message,
  fix,
});
export const fail = (name: string, message: string, fix: string): CheckResult => ({
  name,
  status: 'fail',
  message,
  fix,
});

/** Which modules are on: the stored switches over the form's defaults (docs/api.md §2). */
export type Enabled = (name: ModuleName) => boolean;

// A skew above this warns: access tokens, TOTP steps (30 s) and upstream ID tokens compare times.
const CLOCK_SKEW_WARN_MS = 3000;

/** The clock against the database server's (PostgreSQL); SQLite lives on this machine's clock. */
export async function checkClock(database: Database): Promise<CheckResult> {
  if (database.dialect === 'sqlite')
    return ok('clock', 'SQLite runs on this machine, so there is no second clock to compare');
  const before = Date.now();
  const theirs = await postgresClockMs(database.db);
  const after = Date.now();
  const skew = Math.round(theirs - (before + after) / 2);
  const text = `this machine's clock is ${Math.abs(skew)} ms ${skew > 0 ? 'behind' : 'ahead of'} the database server's`;
  if (Math.abs(skew) > CLOCK_SKEW_WARN_MS + (after - before)) {
    return warn('clock', text, 'run NTP (chrony or systemd-timesyncd) on both machines');
  }
  return ok('clock', text);
}

/** TRUST_PROXY against PUBLIC_URL and HOST (docs/deployment.md, behind a proxy). */
export function checkProxy(config: Config): CheckResult {
  const https = new URL(config.publicUrl).protocol === 'https:';
  const loopbackOnly = ['127.0.0.1', '::1', 'localhost'].includes(config.host);
  if (config.trustProxy === true && !loopbackOnly) {
    return warn(
      'proxy',
      `TRUST_PROXY=true believes X-Forwarded-For from anyone who reaches port ${config.port} (HOST=${config.host}): a client can pick the address throttles and audit see`,
      'list the proxies instead (e.g. TRUST_PROXY=loopback or TRUST_PROXY=10.0.0.5), or bind HOST=127.0.0.1 behind a local proxy',
    );
  }
  if (https && config.trustProxy === false) {
    return warn(
      'proxy',
      'PUBLIC_URL is https but TRUST_PROXY is off: the TLS proxy in front is every client, so address throttles and the audit log lump all clients together',
      "set TRUST_PROXY to the proxy's address or range (e.g. TRUST_PROXY=loopback)",
    );
  }
  const trusted = config.trustProxy === false ? 'off' : `trusts ${String(config.trustProxy)}`;
  return ok('proxy', `TRUST_PROXY ${trusted}, consistent with PUBLIC_URL ${config.publicUrl}`);
}

/** The passkey RP ID and origins against PUBLIC_URL (WebAuthn refuses a mismatch in every browser). */
export function checkPasskeys(config: Config, enabled: Enabled): CheckResult {
  const on = enabled('passkeys') || enabled('mfa');
  const { rpId, origins } = config.webauthn;
  const publicUrl = new URL(config.publicUrl);
  const host = publicUrl.hostname.replace(/^\[|\]$/g, '');
  const problems: Array<[string, string]> = [];
  if (host !== rpId && !host.endsWith(`.${rpId}`)) {
    problems.push([
      `WEBAUTHN_RP_ID ${rpId} is not PUBLIC_URL's host ${host} nor a parent domain of it`,
      `set WEBAUTHN_RP_ID=${host} (or a parent domain of it), or leave it unset`,
    ]);
  }
  if (!origins.includes(publicUrl.origin)) {
    problems.push([
      `WEBAUTHN_ORIGINS (${origins.join(', ')}) lacks PUBLIC_URL's origin ${publicUrl.origin}, where the hosted pages run`,
      `add ${publicUrl.origin} to WEBAUTHN_ORIGINS, or leave it unset`,
    ]);
  }
  if (isIP(rpId) !== 0) {
    problems.push([
      `the RP ID ${rpId} is an IP address, which WebAuthn does not allow`,
      'reach the service by a domain name (PUBLIC_URL=https://auth.example.com), or localhost in development',
    ]);
  } else if (publicUrl.protocol !== 'https:' && host !== 'localhost' && !host.endsWith('.localhost')) {
    problems.push([
      `browsers allow passkeys only on https or localhost, and PUBLIC_URL is ${publicUrl.origin}`,
      'serve PUBLIC_URL over https (a TLS proxy in front)',
    ]);
  }
  const first = problems[0];
  if (!first) return ok('passkeys', `RP ID ${rpId}, origins ${origins.join(', ')} match PUBLIC_URL`);
  const message = `${first[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`;
  // Only a failure while a module that uses passkeys is on; otherwise a warning for later.
  return on
    ? fail('passkeys', message, first[1])
    : warn('passkeys', `${message}; passkeys are off`, first[1]);
}

/** SECRETS_KEY: present where the modules need it, and opening what is stored (docs/mfa.md). */
export async function checkSecretsKey(
  config: Config,
  database: Database,
  enabled: Enabled,
): Promise<CheckResult> {
  const { createSecretsKey } = await import('../identity/tokens/secrets-key.ts');
  const needed = enabled('mfa') || enabled('passkeys');
  const path = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : null;
  const keyFile = path && path !== ':memory:' ? `${path}.secrets-key` : null;
  let raw: Buffer | null = null;
  let source = 'SECRETS_KEY';
  if (config.secretsKey !== null) raw = Buffer.from(config.secretsKey, 'base64');
  else if (keyFile && existsSync(keyFile)) {
    raw = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
    source = `the generated key file ${keyFile}`;
  }
  let stored: { user_id: string; secret_box: string } | undefined;
  try {
    stored = await oneSealedTotpSecret(database.db);
  } catch {
    stored = undefined; // no second-factor tables yet (migrations pending: the database line says so)
  }
  const fixKey = 'set SECRETS_KEY to the key the secrets were sealed with (the same on every instance)';
  if (stored) {
    if (raw === null)
      return fail(
        'secrets-key',
        'second-factor secrets are stored but no key is configured to open them',
        fixKey,
      );
    const opened = createSecretsKey(raw).open(stored.secret_box, `totp:${stored.user_id}`);
    if (opened === null) {
      return fail(
        'secrets-key',
        `${source} does not open the stored second-factor secrets (another key sealed them)`,
        fixKey,
      );
    }
  }
  if (raw === null) {
    if (!needed) return ok('secrets-key', 'not set; no enabled module needs it');
    if (database.dialect === 'postgres') {
      return fail(
        'secrets-key',
        'SECRETS_KEY is not set and mfa or passkeys are on: on PostgreSQL second factors cannot work without it',
        'set SECRETS_KEY=$(openssl rand -base64 32), the same on every instance, and keep it with your backups',
      );
    }
    return warn(
      'secrets-key',
      `SECRETS_KEY is not set: a key will be generated into ${keyFile ?? 'memory'} at first use`,
      'set SECRETS_KEY=$(openssl rand -base64 32) and keep it with your backups',
    );
  }
  const opens = stored ? ' and opens the stored second-factor secrets' : '';
  if (config.secretsKey === null) {
    return warn(
      'secrets-key',
      `${source} is in use${opens}`,
      'back that file up with the database, or move its value into SECRETS_KEY',
    );
  }
  return ok('secrets-key', `set${opens}`);
}
