import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import { rememberRequestClient } from './grant-sessions.ts';

/**
 * The library's pages get a CSP of their own: nothing loads, and `script-src` starts empty so
 * that oidc-provider's form_post page adds exactly the hash of its auto-submit script (the library
 * appends it to an existing `script-src`). Pages Gatehouse renders for the library set theirs.
 */
const PROVIDER_CSP = "default-src 'none'; script-src; base-uri 'none'; frame-ancestors 'none'";

/**
 * Every URL the library builds (discovery, the interaction and resume redirects, the logout form's
 * action, `registration_client_uri`) comes from the request's origin as Koa reads it: `Host`, or
 * `X-Forwarded-Host` and `X-Forwarded-Proto` when the app trusts a proxy. The library trusts them
 * (authorization-server.ts sets `proxy`), and they are overwritten here with PUBLIC_URL's, so a forged `Host` or
 * `X-Forwarded-Host` cannot move an endpoint elsewhere (docs/api.md §17: the issuer is PUBLIC_URL).
 * Its cookies' Secure flag follows PUBLIC_URL's scheme, as Gatehouse's own cookies do. Fastify
 * resolved the client's address and host before this point; `X-Forwarded-For` is left as it came.
 */
export function pinToPublicUrl(ctx: AppContext, raw: IncomingMessage): void {
  const publicUrl = new URL(ctx.config.publicUrl);
  raw.headers.host = publicUrl.host;
  raw.headers['x-forwarded-host'] = publicUrl.host;
  raw.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
}

/**
 * Hands a request to oidc-provider untouched (docs/api.md §17): the body is unread, the request id
 * and security headers already set on the reply are copied to the raw response the library writes.
 */
export async function passToAuthorizationServer(
  ctx: AppContext,
  authorizationServer: AuthorizationServer,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const server = await authorizationServer.get();
  // A grant opened by this request records where it came from as Fastify resolved it (TRUST_PROXY).
  rememberRequestClient(request.raw, clientInfo(request));
  pinToPublicUrl(ctx, request.raw);
  reply.hijack();
  const res = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) res.setHeader(name, value as string | number | string[]);
  }
  res.setHeader('content-security-policy', PROVIDER_CSP);
  await server.handle(request.raw, res);
}
