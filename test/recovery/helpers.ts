import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import { json, PUBLIC_URL } from '../helpers/app.ts';
import type { ReceivedMail, SmtpHarness } from '../support/smtp-server.ts';

export const STRONG_PASSWORD = 'purple elephant juggles seventeen oranges';
export const NEW_PASSWORD = 'seven quiet lanterns drift over harbour';
export const FORGOT_BODY = {
  message: 'If an account exists for this address, we have sent a link to reset its password.',
};
export const SIGNUP_BODY = { message: 'Check your inbox to confirm your address.' };

/** Where the mailed links lead: the hosted pages (docs/api.md §15). */
export const RESET_PREFIX = `${PUBLIC_URL}/account/reset-password/`;
export const VERIFY_PREFIX = `${PUBLIC_URL}/account/verify-email/`;

/** Polls `check` until it returns a truthy value; rejects after `timeoutMs`. */
export async function waitUntil<T>(check: () => Promise<T> | T, what: string, timeoutMs = 8_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves after `ms` (only to give a worker the chance to misbehave, never to assert time). */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Mails received for one address, oldest first. */
export function mailsTo(smtp: SmtpHarness, to: string): ReceivedMail[] {
  return smtp.messages.filter((m) => m.envelope.to.includes(to));
}

/** Waits for the `n`-th mail to an address (1-based) and returns it. */
export async function nthMailTo(smtp: SmtpHarness, to: string, n = 1): Promise<ReceivedMail> {
  return waitUntil(() => mailsTo(smtp, to)[n - 1], `mail #${n} to ${to}`);
}

/** The link of a mail that starts with `prefix`, read from its text body (as a person would). */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const found = (mail.text ?? '').split(/\s+/).find((word) => word.startsWith(prefix));
  if (!found) throw new Error(`no ${prefix}… link in "${mail.subject}"`);
  return found;
}

/** The token at the end of a link's path (links carry `?lang=`: docs/languages.md, "Mails"). */
export function tokenOfLink(link: string): string {
  return new URL(link).pathname.split('/').pop() ?? '';
}

/** POST with a JSON body from a given client address. */
export function post(
  t: TestApp,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
  remoteAddress = '127.0.0.1',
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    headers,
    remoteAddress,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
}

/** POST /login; returns the response. */
export function login(t: TestApp, email: string, password: string, remoteAddress = '127.0.0.1') {
  return post(t, '/api/v1/login', { email, password }, {}, remoteAddress);
}

/** Logs in and returns the token response (throws on failure). */
export async function signIn(t: TestApp, email: string, password: string) {
  const res = await login(t, email, password);
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return json<{ access_token: string; refresh_token: string; user: Record<string, unknown> }>(res);
}

/** GET /verify-token with an access token. */
export function verifyToken(t: TestApp, access: string) {
  return t.app.inject({ url: '/api/v1/verify-token', headers: { authorization: `Bearer ${access}` } });
}

/** Audit actions recorded for a user (as target), oldest first. */
export async function auditActions(t: TestApp, userId: string): Promise<string[]> {
  const rows = await t.ctx.db
    .selectFrom('audit_log')
    .select('action')
    .where('target_id', '=', userId)
    .orderBy('at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}
