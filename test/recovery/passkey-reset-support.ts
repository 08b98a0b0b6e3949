import type { LightMyRequestResponse } from 'fastify';
import { json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { nextAddress } from '../mfa/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import type { AuthenticatorFlags, SoftCredential } from '../support/webauthn-authenticator.ts';
import { linkIn, mailsTo, post, tokenOfLink, waitUntil } from './helpers.ts';

/** The RP ID of the test apps (the host of PUBLIC_URL). */
export const RP_ID = new URL(PUBLIC_URL).hostname;
const RESET_PREFIX = `${PUBLIC_URL}/account/reset-password/`;

/** An authentication ceremony as `POST /passkeys/authentication/options` answers it. */
export interface Ceremony {
  challenge_id: string;
  options: {
    challenge: string;
    rpId?: string;
    userVerification?: string;
    allowCredentials?: Array<{ id: string }>;
  };
}

const seenLinks = new Set<string>();

/**
 * Asks for a reset link as a person would (`POST /password/forgot`) and reads it from the mail the
 * real SMTP server received: the token of the first reset link to that address not returned before.
 */
export async function mailedResetToken(t: TestApp, smtp: SmtpHarness, email: string): Promise<string> {
  const asked = await post(t, '/api/v1/password/forgot', { email }, {}, nextAddress());
  if (asked.statusCode !== 202) throw new Error(`forgot: ${asked.statusCode} ${asked.body}`);
  const link = await waitUntil(
    () =>
      mailsTo(smtp, email)
        .filter((m) => (m.text ?? '').includes(RESET_PREFIX))
        .map((m) => linkIn(m, RESET_PREFIX))
        .find((l) => !seenLinks.has(l)),
    `a new reset mail to ${email}`,
  );
  seenLinks.add(link);
  return tokenOfLink(link);
}

/** `POST /passkeys/authentication/options` with a body, from an address. */
export function passkeyOptions(t: TestApp, body: Record<string, unknown>, address = nextAddress()) {
  return post(t, '/api/v1/passkeys/authentication/options', body, {}, address);
}

/** Options for a reset (must answer 200). */
export async function resetCeremony(t: TestApp, resetToken: string): Promise<Ceremony> {
  const res = await passkeyOptions(t, { reset_token: resetToken });
  if (res.statusCode !== 200) throw new Error(`reset options: ${res.statusCode} ${res.body}`);
  return json<Ceremony>(res);
}

/** The `passkey` member of a body: the credential's assertion over a ceremony's challenge. */
export function passkeyProof(
  credential: SoftCredential,
  ceremony: Ceremony,
  flags: AuthenticatorFlags & { step?: number } = {},
) {
  const response = credential.assert(
    { challenge: ceremony.options.challenge, rpId: RP_ID },
    PUBLIC_URL,
    flags,
  );
  return { challenge_id: ceremony.challenge_id, response };
}

/** `POST /password/reset/<token>` from an address. */
export function resetWith(
  t: TestApp,
  resetToken: string,
  body: Record<string, unknown>,
  address = nextAddress(),
): Promise<LightMyRequestResponse> {
  return post(t, `/api/v1/password/reset/${resetToken}`, body, {}, address);
}

/** `GET /password/reset/<token>`: 200 while the link is usable, 410 once it is not. */
export async function linkStatus(t: TestApp, resetToken: string): Promise<number> {
  return (await t.app.inject({ url: `/api/v1/password/reset/${resetToken}`, remoteAddress: nextAddress() }))
    .statusCode;
}
