import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import type { LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { createUser, sessionFor } from '../helpers/users.ts';
import { type AuthenticatorFlags, SoftCredential } from '../support/webauthn-authenticator.ts';

export const PASSWORD = 'a long and unusual passphrase 7';

/** The TOTP code of a base32 secret for the step `offset` steps from now (what an authenticator app shows). */
export function totpCode(secret: string, offset = 0): string {
  const step = Math.floor(Date.now() / 30_000) + offset;
  return generateHOTP(decodeBase32IgnorePadding(secret), BigInt(step), 6);
}

let address = 0;
/** A fresh client address per call, so per-address budgets never interfere between cases. */
export function nextAddress(): string {
  return `10.22.${Math.floor(++address / 250)}.${(address % 250) + 1}`;
}

/** A request helper bound to an app, a bearer token and a client address. */
export function caller(t: TestApp, accessToken?: string, remoteAddress = nextAddress()) {
  return (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      remoteAddress,
      ...(payload !== undefined && { payload: payload as Record<string, unknown> }),
      headers: { ...(accessToken && { authorization: `Bearer ${accessToken}` }), 'user-agent': 'mfa-tests' },
    });
}

/** A user with a password and a session (its access token). */
export async function userWithSession(t: TestApp, email?: string) {
  const user = await createUser(t, { password: PASSWORD, ...(email && { email }) });
  const session = await sessionFor(t, user);
  return { user, token: session.access_token, session };
}

/** Enrols and confirms TOTP for a user; returns the secret and the recovery codes. */
export async function enableTotp(
  t: TestApp,
  token: string,
  password = PASSWORD,
): Promise<{ secret: string; recoveryCodes: string[]; confirm: LightMyRequestResponse }> {
  const call = caller(t, token);
  const enrol = await call('POST', '/api/v1/mfa/totp', { current_password: password });
  if (enrol.statusCode !== 200) throw new Error(`enrol: ${enrol.statusCode} ${enrol.body}`);
  const { secret } = json<{ secret: string }>(enrol);
  const confirm = await call('POST', '/api/v1/mfa/totp/confirm', { code: totpCode(secret) });
  if (confirm.statusCode !== 200) throw new Error(`confirm: ${confirm.statusCode} ${confirm.body}`);
  return { secret, recoveryCodes: json<{ recovery_codes: string[] }>(confirm).recovery_codes, confirm };
}

/** Registers a software passkey for a signed-in user through the API; returns it and its passkey id. */
export async function registerPasskey(
  t: TestApp,
  token: string,
  flags: AuthenticatorFlags = {},
  password = PASSWORD,
) {
  const call = caller(t, token);
  const opts = await call('POST', '/api/v1/passkeys/registration/options', { current_password: password });
  if (opts.statusCode !== 200) throw new Error(`passkey options: ${opts.statusCode} ${opts.body}`);
  const ceremony = json<{
    challenge_id: string;
    options: { challenge: string; rp: { id: string }; user: { id: string } };
  }>(opts);
  const credential = new SoftCredential(ceremony.options.user.id);
  const res = await call('POST', '/api/v1/passkeys', {
    challenge_id: ceremony.challenge_id,
    response: credential.register(ceremony.options, PUBLIC_URL, flags),
  });
  if (res.statusCode !== 201) throw new Error(`passkey: ${res.statusCode} ${res.body}`);
  return { credential, id: json<{ id: string }>(res).id };
}

/** Password login that must answer 403 mfa_required; returns its mfa_token and methods. */
export async function passwordStep(t: TestApp, user: UserRow, remoteAddress = nextAddress()) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/login',
    remoteAddress,
    payload: { email: user.email, password: PASSWORD },
  });
  if (res.statusCode !== 403) throw new Error(`login: ${res.statusCode} ${res.body}`);
  const body = json<{ code: string; mfa_token: string; methods: string[] }>(res);
  return { ...body, remoteAddress, res };
}

/** POST /login/mfa with a code from an address. */
export function loginMfa(t: TestApp, mfaToken: string, code: string, remoteAddress = nextAddress()) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/login/mfa',
    remoteAddress,
    payload: { mfa_token: mfaToken, code },
  });
}

/** The claims part of a JWT. */
export function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString('utf8'));
}
