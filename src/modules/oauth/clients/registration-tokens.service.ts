import { type AuditActor, type ClientInfo, recordAudit } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { AuthorizationServer } from '../server/authorization-server.ts';
import { SINGLE_USE } from './registration-policies.ts';

/** How long a registration token may be used, in seconds (CLI `--ttl`, API `ttl_s`). */
export const REGISTRATION_TOKEN_TTL_S = { min: 60, max: 31_536_000, default: 86_400 } as const;

/** Who asked: an admin through the API, or the system from the CLI (for the audit entry). */
export interface MadeBy {
  actor: AuditActor;
  client: ClientInfo | null;
}

/**
 * An initial access token for `OAUTH_DYNAMIC_REGISTRATION=token` (docs/api.md §17): the one
 * implementation behind `gatehouse clients registration-token` and `POST
 * /api/v1/clients/registration-tokens`. The value is in this answer only; the adapter stores its
 * SHA-256, never the value. In another mode the token could never be used, so it is refused
 * (409 `module_unavailable`, the CLI's refusal too) rather than made.
 */
export async function createRegistrationToken(
  ctx: AppContext,
  server: AuthorizationServer,
  ttlS: number | undefined,
  by: MadeBy,
): Promise<{ token: string; expires_at: string }> {
  if (ctx.config.oauth.dynamicRegistration !== 'token') {
    throw new ApiError('module_unavailable', {
      detail: 'OAUTH_DYNAMIC_REGISTRATION is not token: registration tokens are not used',
    });
  }
  const { min, max } = REGISTRATION_TOKEN_TTL_S;
  const ttl = ttlS ?? REGISTRATION_TOKEN_TTL_S.default;
  if (!Number.isInteger(ttl) || ttl < min || ttl > max) {
    const message = `must be whole seconds between ${min} and ${max}`;
    throw new ApiError('validation_failed', {
      detail: `the token's lifetime (ttl_s, --ttl) ${message}`,
      errors: [{ path: '/ttl_s', message }],
    });
  }
  const { provider } = await server.get();
  // Reported a moment before the adapter's own clock: never later than the stored expiry.
  const expiresAt = Date.now() + ttl * 1000;
  const token: string = await new provider.InitialAccessToken({
    expiresIn: ttl,
    policies: [SINGLE_USE],
  }).save();
  // Not in one transaction with the token (the library's adapter writes it): should this entry
  // fail, the answer is a 500 and the value, shown nowhere, is useless until it expires.
  await recordAudit(ctx.db, {
    action: 'oauth.registration_token_create',
    actor: by.actor,
    client: by.client,
    details: { ttl_s: ttl, expires_at: new Date(expiresAt).toISOString() },
  });
  return { token, expires_at: new Date(expiresAt).toISOString() };
}
