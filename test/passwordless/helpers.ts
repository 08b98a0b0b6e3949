import type { LightMyRequestResponse } from 'fastify';
import { json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import type { ReceivedMail, SmtpHarness } from '../support/smtp-server.ts';

/** The hosted page a sign-in mail links to (docs/api.md §20). */
export const SIGNIN_PREFIX = `${PUBLIC_URL}/account/sign-in/email/`;
export const REQUEST_BODY = {
  message: 'If an account exists for this address, we have sent it a sign-in link and code.',
};

let address = 0;
/** A fresh client address per call, so per-address budgets never interfere between cases. */
export function nextAddress(): string {
  address += 1;
  return `10.77.${Math.floor(address / 250)}.${(address % 250) + 1}`;
}

/** POST a JSON body from a client address. */
export function post(t: TestApp, url: string, payload: unknown, remoteAddress = nextAddress()) {
  return t.app.inject({ method: 'POST', url, remoteAddress, payload: payload as Record<string, unknown> });
}

/** POST /login/email. */
export function requestSignIn(t: TestApp, email: string, remoteAddress = nextAddress()) {
  return post(t, '/api/v1/login/email', { email }, remoteAddress);
}

/** POST /login/email/verify with an address and code. */
export function verifyCode(t: TestApp, email: string, code: string, remoteAddress = nextAddress()) {
  return post(t, '/api/v1/login/email/verify', { email, code }, remoteAddress);
}

/** POST /login/email/verify with a link's token. */
export function verifyToken(t: TestApp, token: string, remoteAddress = nextAddress()) {
  return post(t, '/api/v1/login/email/verify', { token }, remoteAddress);
}

/** The 6-digit code of a sign-in mail, read from its text body as a person would. */
export function codeIn(mail: ReceivedMail): string {
  const found = /sign-in code is (\d{6})/.exec(mail.text ?? '');
  if (!found?.[1]) throw new Error(`no code in "${mail.subject}"`);
  return found[1];
}

/** The token of the sign-in link of a mail. */
export function tokenIn(mail: ReceivedMail): string {
  const link = (mail.text ?? '').split(/\s+/).find((w) => w.startsWith(SIGNIN_PREFIX));
  if (!link) throw new Error(`no sign-in link in "${mail.subject}"`);
  return link.slice(SIGNIN_PREFIX.length);
}

/** The problem body without the members that differ per request. */
export function problemShape(res: LightMyRequestResponse): Record<string, unknown> {
  const { instance: _i, request_id: _r, ...rest } = json(res);
  return { status: res.statusCode, ...rest };
}

/** Mails to one address so far. */
export function mailsTo(smtp: SmtpHarness, to: string): ReceivedMail[] {
  return smtp.messages.filter((m) => m.envelope.to.includes(to));
}

/** Waits for the `n`-th sign-in mail (1-based) to an address; other mails (security notices) are skipped. */
export async function signInMail(smtp: SmtpHarness, to: string, n = 1): Promise<ReceivedMail> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const found = mailsTo(smtp, to).filter((m) => /sign-in link and code/i.test(m.subject ?? ''))[n - 1];
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for sign-in mail #${n} to ${to}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
