import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import { json } from '../helpers/app.ts';

/** Polls `check` until it returns a truthy value; rejects after `timeoutMs`. */
export async function waitUntil<T>(
  check: () => Promise<T> | T,
  what: string,
  timeoutMs = 8_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves after `ms` (used only to give a worker the chance to misbehave, never to assert time). */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface InviteResponseBody {
  invitation: { id: string; email: string; role: string; expires_at: string; invite_url: string };
  user: { id: string; email: string; name: string; role: string; status: string; email_verified: boolean };
}

/** POST /api/v1/users/invite as the given caller. */
export function invite(
  t: TestApp,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/api/v1/users/invite', headers, payload: body });
}

/** The token at the end of an invite_url. */
export function tokenOf(body: InviteResponseBody): string {
  const token = body.invitation.invite_url.split('/').pop();
  if (!token) throw new Error('invite_url has no token');
  return token;
}

/** POST …/set-password. */
export function setPassword(t: TestApp, token: string, password: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/invite/${token}/set-password`,
    payload: { password },
  });
}

/** Outbox rows, oldest first. */
export function outboxRows(t: TestApp) {
  return t.ctx.db.selectFrom('outbox').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** The mailer check of /health/detailed. */
export async function mailerHealth(t: TestApp): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ url: '/health/detailed' });
  return json<{ checks: Record<string, Record<string, unknown>> }>(res).checks.mailer ?? {};
}

export const STRONG_PASSWORD = 'purple elephant juggles seventeen oranges';
