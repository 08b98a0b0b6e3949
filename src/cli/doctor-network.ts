import type { Config } from '../platform/config.ts';
import { type CheckResult, type Enabled, fail, ok, warn } from './doctor-checks.ts';

// Every check here targets only a configured address (PUBLIC_URL, SMTP_URL, OIDC_ISSUER) or this
// machine's loopback at PORT; each waits at most this long.
const TIMEOUT_MS = 5000;

async function get(url: string): Promise<{ status: number; body: string } | { error: string }> {
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)) };
  }
}

/**
 * PUBLIC_URL against how the service is reached: GET PUBLIC_URL/health must answer, and the
 * discovery document there must name PUBLIC_URL as its issuer (else another configuration or
 * another service answers). When PUBLIC_URL does not answer, this machine's loopback at PORT
 * tells "wrong PUBLIC_URL" from "not running".
 */
export async function checkPublicUrl(config: Config): Promise<CheckResult> {
  const base = config.publicUrl;
  const health = await get(`${base}/health`);
  if ('error' in health || health.status !== 200) {
    const why = 'error' in health ? health.error : `HTTP ${health.status}`;
    const local = await get(`http://127.0.0.1:${config.port}/health`);
    if (!('error' in local) && local.status === 200) {
      return fail(
        'public-url',
        `${base}/health does not answer (${why}), but the service answers on 127.0.0.1:${config.port}`,
        'set PUBLIC_URL to the address clients use to reach this service (or fix the proxy or DNS in front of it)',
      );
    }
    return fail(
      'public-url',
      `${base}/health does not answer (${why}), nor does 127.0.0.1:${config.port}`,
      'start the service (gatehouse serve) with this configuration, then run doctor again; if it runs elsewhere, set PUBLIC_URL to where clients reach it',
    );
  }
  const discovery = await get(`${base}/.well-known/openid-configuration`);
  let issuer: unknown;
  if (!('error' in discovery) && discovery.status === 200) {
    try {
      issuer = (JSON.parse(discovery.body) as { issuer?: unknown }).issuer;
    } catch {
      issuer = undefined;
    }
  }
  if (issuer !== base) {
    return fail(
      'public-url',
      `${base} answers, but not as this configuration: its issuer is ${typeof issuer === 'string' ? issuer : 'missing'}`,
      'give the service and this command the same PUBLIC_URL (tokens, links and passkeys all use it)',
    );
  }
  if (!config.publicUrlSet) {
    return warn(
      'public-url',
      `PUBLIC_URL is not set, so ${base} is assumed: links in mails and the token issuer name it`,
      'set PUBLIC_URL to the address clients use (e.g. https://auth.example.com)',
    );
  }
  return ok('public-url', `${base}/health answers and the service there issues tokens as ${base}`);
}

// The modules that send mail (docs/email.md).
const MAIL_MODULES = ['invitations', 'recovery', 'email', 'registration'] as const;

/** SMTP: connect and authenticate; with `mailTo`, send one test message. */
export async function checkSmtp(
  config: Config,
  enabled: Enabled,
  mailTo: string | undefined,
): Promise<CheckResult> {
  const senders = MAIL_MODULES.filter((m) => enabled(m));
  if (config.smtpUrl === null) {
    if (mailTo !== undefined) {
      return fail(
        'smtp',
        `SMTP_URL is not set, so no test mail can go to ${mailTo}`,
        'set SMTP_URL (smtp://user:pass@host:587)',
      );
    }
    if (senders.length === 0) return ok('smtp', 'SMTP_URL is not set; no enabled module sends mail');
    return warn(
      'smtp',
      `SMTP_URL is not set: mail of ${senders.join(', ')} is written to the log, never sent`,
      'set SMTP_URL (smtp://user:pass@host:587)',
    );
  }
  const { createMailTransport } = await import('../platform/mail/mailer.ts');
  const transport = createMailTransport({
    smtpUrl: config.smtpUrl,
    ...(config.smtpCa !== null ? { smtpCa: config.smtpCa } : {}),
    from: config.mailFrom,
    logger: { info: () => {} },
  });
  const server = smtpServerOf(config.smtpUrl);
  const fix =
    'check SMTP_URL (host, port, user, password; smtps:// for TLS from the start) and that the server accepts this machine';
  try {
    const verified = await transport.verify();
    if (!verified.ok)
      return fail('smtp', `${server} refused or did not answer: ${verified.error ?? 'unknown error'}`, fix);
    if (mailTo === undefined)
      return ok(
        'smtp',
        `${server} accepts the connection and the login (--mail-to <address> also sends a test mail)`,
      );
    try {
      await transport.send({
        to: mailTo,
        subject: `${config.appName}: test mail from gatehouse doctor`,
        text: `This test mail was sent by "gatehouse doctor" of ${config.publicUrl}. Nothing needs doing.`,
        html: `<p>This test mail was sent by <code>gatehouse doctor</code> of ${escapeHtml(config.publicUrl)}. Nothing needs doing.</p>`,
      });
    } catch (err) {
      return fail(
        'smtp',
        `${server} did not take the test mail to ${mailTo}: ${err instanceof Error ? err.message : String(err)}`,
        fix,
      );
    }
    return ok('smtp', `${server} accepted a test mail to ${mailTo}`);
  } finally {
    transport.close();
  }
}

/** The SMTP server's address, without credentials. */
function smtpServerOf(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  return `${url.protocol}//${url.host}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The upstream OpenID provider's discovery document, when one is configured (docs/idp.md). */
export async function checkIdp(config: Config, enabled: Enabled): Promise<CheckResult> {
  const issuer = config.oidc.issuer;
  if (issuer === null) return ok('idp', 'no identity provider configured');
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const res = await get(url);
  const level = enabled('idp') ? fail : warn;
  const fix =
    'check OIDC_ISSUER (the exact issuer URL the provider publishes) and that this machine can reach it';
  if ('error' in res || res.status !== 200) {
    return level('idp', `${url} does not answer (${'error' in res ? res.error : `HTTP ${res.status}`})`, fix);
  }
  let doc: { issuer?: unknown; jwks_uri?: unknown };
  try {
    doc = JSON.parse(res.body) as typeof doc;
  } catch {
    return level('idp', `${url} is not a JSON discovery document`, fix);
  }
  if (doc.issuer !== issuer) {
    return level(
      'idp',
      `the provider names itself ${String(doc.issuer)}, not OIDC_ISSUER ${issuer}: its ID tokens would be refused`,
      `set OIDC_ISSUER=${String(doc.issuer)}`,
    );
  }
  if (typeof doc.jwks_uri !== 'string') return level('idp', `${url} has no jwks_uri`, fix);
  return ok(
    'idp',
    `${issuer} publishes its discovery document${enabled('idp') ? '' : ' (the idp module is off)'}`,
  );
}
