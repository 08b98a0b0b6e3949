import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import type { AppContext } from '../../kernel/context.types.ts';

/*
 * One origin for the hosted pages (docs/pages.md, "One address"): cookies, the CSRF check (`Origin`
 * equal to PUBLIC_URL's) and passkeys (the RP ID) all belong to PUBLIC_URL's origin. The server says
 * `127.0.0.1` where PUBLIC_URL says `localhost`, and both reach it, so a page opened on the other
 * loopback name is redirected to PUBLIC_URL; elsewhere (another host, a proxy) the sign-in's refusal
 * is a plain sentence for the person and one technical warning for the operator.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Logs its warning once per app; the app makes one and hands it to the hooks that may warn. */
export type AddressWarning = (fields: Record<string, unknown>, message: string) => void;

/**
 * Logs, once per app (not per request), that browsers reach Gatehouse at another address than
 * PUBLIC_URL. The first case seen is the one logged; each says what it did and what to set.
 */
export function createAddressWarning(ctx: AppContext): AddressWarning {
  let warned = false;
  return (fields, message) => {
    if (warned) return;
    warned = true;
    ctx.log.warn({ public_url: ctx.config.publicUrl, ...fields }, message);
  };
}

function effectivePort(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/**
 * Where a page request should go instead, or null: only when PUBLIC_URL's host is a loopback name and
 * the request came for another loopback name on the same port (the same server, another origin).
 */
export function canonicalPageUrl(publicUrl: URL, request: FastifyRequest): string | null {
  if (!LOOPBACK.has(publicUrl.hostname)) return null;
  const seen = URL.parse(`${request.protocol}://${request.host}`);
  if (seen === null || !LOOPBACK.has(seen.hostname) || seen.hostname === publicUrl.hostname) return null;
  if (effectivePort(seen) !== effectivePort(publicUrl)) return null;
  // Same path and query on PUBLIC_URL's origin: an absolute URL, so no path can make it point elsewhere.
  return `${publicUrl.origin}${request.url}`;
}

/** A page route: the HTML of `/account…` and `/admin` (GET, and the HEAD Fastify adds), not their assets. */
function isPageRoute(route: RouteOptions): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.every((m) => m === 'GET' || m === 'HEAD')) return false;
  const url = route.url;
  if (url === '/admin') return true;
  return (url === '/account' || url.startsWith('/account/')) && !url.startsWith('/account/assets/');
}

/** Adds the redirect to every page route. Must be called before the routes are added. */
export function installPublicOrigin(
  app: FastifyInstance,
  ctx: AppContext,
  warnAddress: AddressWarning,
): void {
  const publicUrl = new URL(ctx.config.publicUrl);
  if (!LOOPBACK.has(publicUrl.hostname)) return;
  const redirect: onRequestHookHandler = (request, reply, done) => {
    const target = canonicalPageUrl(publicUrl, request);
    if (target === null) return done();
    warnAddress(
      { host: request.host },
      `pages were requested at ${request.protocol}://${request.host}, not at PUBLIC_URL: they are redirected there (cookies and passkeys work on one origin only); link to PUBLIC_URL, or set PUBLIC_URL to the address people use`,
    );
    reply.header('cache-control', 'no-store').redirect(target, 307);
  };
  app.addHook('onRoute', (route) => {
    if (!isPageRoute(route)) return;
    const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [redirect, ...existing];
  });
}
