import type { LightMyRequestResponse } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import type { OidcHarness } from '../support/oidc-provider.ts';
import { json, type TestApp } from './app.ts';

/** Env pointing a test app at the harness. Cooldown 0: a rotated key is refetched at once, no waiting. */
export function idpEnv(op: OidcHarness, extra: Record<string, string> = {}): Record<string, string> {
  return { OIDC_ISSUER: op.issuer, OIDC_CLIENT_ID: op.clientId, OIDC_JWKS_COOLDOWN_S: '0', ...extra };
}

/** POST /api/v1/idp/verify. */
export function postVerify(t: TestApp, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/api/v1/idp/verify', payload: body });
}

/** Signs in at the provider and hands the ID token (with its nonce) to Gatehouse. */
export async function signInThroughIdp(
  t: TestApp,
  op: OidcHarness,
  accountId: string,
): Promise<LightMyRequestResponse> {
  const { idToken, nonce } = await op.signIn(accountId);
  return postVerify(t, { id_token: idToken, nonce });
}

export interface Problem {
  status: number;
  code: string;
  detail?: string;
}

/** The problem body of an error response. */
export function problem(res: LightMyRequestResponse): Problem {
  return json<Problem>(res);
}

/** An ID token with valid claims signed by a key the provider never published. */
export async function tokenFromForeignKey(op: OidcHarness, kid: string): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: 'alice@example.com', email_verified: true })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
    .setIssuer(op.issuer)
    .setAudience(op.clientId)
    .setSubject('alice')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(privateKey);
}

/** Counts rows of users with an email and identities with a subject (refusals must write nothing). */
export async function countFor(t: TestApp, email: string, subject: string) {
  const users = await t.ctx.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  const identities = await t.ctx.db
    .selectFrom('identities')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('subject', '=', subject)
    .executeTakeFirstOrThrow();
  return { users: Number(users.n), identities: Number(identities.n) };
}
