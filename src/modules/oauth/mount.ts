import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.ts';
import { rememberRequestClient } from './grant-sessions.ts';
import { authorizationServer } from './provider.ts';

/**
 * The library's pages get a CSP of their own: nothing loads, and `script-src` starts empty so
 * that oidc-provider's form_post page adds exactly the hash of its auto-submit script (the library
 * appends it to an existing `script-src`). Pages Gatehouse renders for the library set theirs.
 */
const PROVIDER_CSP = "default-src 'none'; script-src; base-uri 'none'; frame-ancestors 'none'";

/**
 * Hands a request to oidc-provider untouched (docs/api.md §17): the body is unread, the request id
 * and security headers already set on the reply are copied to the raw response the library writes.
 */
export async function passToAuthorizationServer(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const server = await authorizationServer(ctx);
  // A grant opened by this request records where it came from as Fastify resolved it (TRUST_PROXY).
  rememberRequestClient(request.raw, clientInfo(request));
  reply.hijack();
  const res = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) res.setHeader(name, value as string | number | string[]);
  }
  res.setHeader('content-security-policy', PROVIDER_CSP);
  await server.handle(request.raw, res);
}
