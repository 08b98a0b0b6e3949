import type { FastifyReply, FastifyRequest } from 'fastify';
import { reserveAttempt } from '../../../identity/budgets/attempt-budget.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { AuthorizationServer } from '../server/authorization-server.ts';
import { passToAuthorizationServer } from '../server/mount.ts';

/**
 * `POST /oauth2/register` with OAUTH_DYNAMIC_REGISTRATION=open: at most
 * OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR per client address, reserved before the library runs;
 * over it, 429 with an RFC 6749-style body and Retry-After.
 */
export async function registrationHandoff(
  ctx: AppContext,
  server: AuthorizationServer,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (ctx.config.oauth.dynamicRegistration === 'open') {
    const reserved = await reserveAttempt(ctx.db, [
      {
        key: `oauth_register:${request.ip}`,
        limit: ctx.config.oauth.registrationsPerAddressPerHour,
        windowMs: 3_600_000,
      },
    ]);
    if (!reserved.ok) {
      reply.hijack();
      const res = reply.raw;
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) res.setHeader(name, value as string | number | string[]);
      }
      res.writeHead(429, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'retry-after': String(Math.ceil(reserved.retryAfterMs / 1000)),
      });
      res.end(
        JSON.stringify({
          error: 'invalid_request',
          error_description: 'too many registrations from this address; try later',
        }),
      );
      return;
    }
  }
  await passToAuthorizationServer(ctx, server, request, reply);
}
