import { createRequire } from 'node:module';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';

/** One outgoing e-mail: a single recipient with a plain-text and an HTML body. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The language it is written in (a catalog's tag), sent as `Content-Language`; absent: English. */
  lang?: string;
}

/** Something that delivers a MailMessage; the outbox worker is its only intended caller. */
export interface MailTransport {
  readonly name: 'smtp' | 'log';
  /** Resolves once the server accepted the message; rejects with a MailDeliveryError otherwise. */
  send(msg: MailMessage): Promise<void>;
  /** Connects and authenticates without sending; never rejects. */
  verify(): Promise<{ ok: boolean; error?: string }>;
  close(): void;
}

/** The subset of a pino logger the mail layer writes to. */
export interface MailLogger {
  info(obj: object, msg: string): void;
}

export interface MailTransportOptions {
  /** `smtp://user:pass@host:587` or `smtps://user:pass@host:465`; absent means the log transport. */
  smtpUrl?: string;
  /** PEM certificates the SMTP server's certificate must chain to (SMTP_CA_FILE), instead of the public CAs. */
  smtpCa?: string;
  /** The From header, e.g. `Gatehouse <no-reply@example.com>`. */
  from: string;
  logger: MailLogger;
}

/**
 * A failed delivery. The message never carries the SMTP password; `permanent` is true only when
 * the server refused the message for good (5xx), so a retrying caller can stop early.
 */
export class MailDeliveryError extends Error {
  override readonly name = 'MailDeliveryError';
  readonly code: string | undefined;
  readonly responseCode: number | undefined;
  readonly permanent: boolean;

  constructor(message: string, details: { code?: string; responseCode?: number; permanent?: boolean } = {}) {
    super(message);
    this.code = details.code;
    this.responseCode = details.responseCode;
    this.permanent = details.permanent === true;
  }
}

// A dead or black-holed server must fail fast: the outbox retries later anyway, and a worker stuck
// for nodemailer's defaults (2 min connect, 10 min idle) would hold up every message behind it.
// The URL's query string can still override these (nodemailer applies URL options last).
const CONNECTION_TIMEOUT_MS = 5_000;
const GREETING_TIMEOUT_MS = 5_000;
const SOCKET_TIMEOUT_MS = 10_000;
const DNS_TIMEOUT_MS = 5_000;

/** Builds the SMTP transport when `smtpUrl` is set, else the development log transport. */
export function createMailTransport(opts: MailTransportOptions): MailTransport {
  const smtpUrl = opts.smtpUrl?.trim();
  if (smtpUrl) return createSmtpTransport(smtpUrl, opts.from, opts.smtpCa);
  return createLogTransport(opts.logger);
}

interface ParsedSmtpUrl {
  secrets: string[];
}

function parseSmtpUrl(smtpUrl: string): ParsedSmtpUrl {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    // The unparsable value may well be a password typed into the wrong place: never echo it.
    throw new Error('SMTP_URL is not a valid URL (expected smtp://user:pass@host:port or smtps://…)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new Error(`SMTP_URL must use smtp:// or smtps://, not ${url.protocol}//`);
  }
  if (!url.hostname) throw new Error('SMTP_URL has no host');
  return { secrets: credentialForms(url) };
}

// Every spelling in which the password could reach an error text: as written in the URL
// (percent-encoded), decoded, and base64-encoded the way AUTH LOGIN and AUTH PLAIN send it.
function credentialForms(url: URL): string[] {
  if (!url.password) return [];
  const user = safeDecode(url.username);
  const pass = safeDecode(url.password);
  const forms = [
    url.password,
    pass,
    Buffer.from(pass).toString('base64'),
    Buffer.from(`\u0000${user}\u0000${pass}`).toString('base64'),
  ];
  // Longest first, so a shorter form never leaves a fragment of a longer one behind.
  return [...new Set(forms)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

interface NodemailerFailure {
  message?: unknown;
  code?: unknown;
  responseCode?: unknown;
  permanent?: unknown;
}

// Rebuilds the error from scratch instead of wrapping it: nodemailer errors carry the raw
// command and response, and a `cause` would drag those into every log line.
function toDeliveryError(err: unknown, secrets: readonly string[], what = 'delivery'): MailDeliveryError {
  const e: NodemailerFailure = typeof err === 'object' && err !== null ? err : {};
  const raw = typeof e.message === 'string' && e.message ? e.message : String(err);
  return new MailDeliveryError(`SMTP ${what} failed: ${redact(raw, secrets)}`, {
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.responseCode === 'number' ? { responseCode: e.responseCode } : {}),
    permanent: e.permanent === true,
  });
}

const BARE_ADDRESS = /^[^\s,;<>()"\\]+@[^\s,;<>()"\\@]+$/u;

// nodemailer is loaded only when SMTP_URL is set: with it come undici, http2, tls, child_process
// and dgram, ~3 MB of heap and ~4.5 MB of resident memory that a service on the log transport never
// uses (docs/benchmarks.md, peak memory). Synchronously, so a bad SMTP_URL still stops the start.
const require = createRequire(import.meta.url);

function createSmtpTransport(smtpUrl: string, from: string, ca: string | undefined): MailTransport {
  const { secrets } = parseSmtpUrl(smtpUrl);
  const { createTransport } = require('nodemailer') as typeof import('nodemailer');
  const SmtpTransport = require('nodemailer/lib/smtp-transport') as typeof SMTPTransport;
  // Not pooled: invitations are rare, and a fresh connection per message means nothing goes stale
  // when the server restarts, and there is no second retry loop (the pool requeues a message on a
  // dropped connection) hiding failures from the outbox, which owns retries. Built as an
  // SMTPTransport instance so that a `?pool=true` in the URL cannot switch pooling on behind
  // our back.
  const transporter = createTransport(
    new SmtpTransport({
      url: smtpUrl,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      dnsTimeout: DNS_TIMEOUT_MS,
      // Verification stays on: a private certificate is trusted by naming its CA, never by
      // turning checks off (docs/configuration.md, SMTP_CA_FILE).
      ...(ca ? { tls: { ca } } : {}),
      logger: false,
      debug: false,
    }),
  );

  return {
    name: 'smtp',
    async send(msg) {
      // One bare address only: no display name, list or header-breaking characters. Refused
      // before connecting and marked permanent, since no retry can fix the message.
      if (!BARE_ADDRESS.test(msg.to)) {
        throw new MailDeliveryError('SMTP delivery failed: recipient is not a single bare e-mail address', {
          code: 'EENVELOPE',
          permanent: true,
        });
      }
      try {
        await transporter.sendMail({
          from,
          // An address object, not a string: nodemailer would read "a@x, b@y" as two recipients.
          to: { name: '', address: msg.to },
          subject: msg.subject,
          text: msg.text,
          html: msg.html,
          headers: { 'Content-Language': msg.lang ?? 'en' },
        });
      } catch (err) {
        throw toDeliveryError(err, secrets);
      }
    },
    async verify() {
      try {
        await transporter.verify();
        return { ok: true };
      } catch (err) {
        return { ok: false, error: toDeliveryError(err, secrets, 'check').message };
      }
    },
    close() {
      transporter.close();
    },
  };
}

// DEVELOPMENT ONLY. The text body holds the invitation link, and that link is a bearer secret:
// whoever reads this log line can take over the invited account. Never run without SMTP_URL
// where logs are shipped or read by anyone but the developer.
function createLogTransport(logger: MailLogger): MailTransport {
  return {
    name: 'log',
    async send(msg) {
      logger.info(
        { mail: { to: msg.to, subject: msg.subject, text: msg.text } },
        'mail not sent: no SMTP_URL configured (log transport, development only)',
      );
    },
    async verify() {
      return { ok: true };
    },
    close() {},
  };
}
