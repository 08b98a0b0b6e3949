import { parseCookie, stringifySetCookie } from 'cookie';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  onSendHookHandler,
  preValidationHookHandler,
  RouteOptions,
} from 'fastify';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { lookupOne } from '../../platform/i18n/index.ts';
import { languageCookie } from './language.ts';
import type { AddressWarning } from './public-origin.ts';
import { LANG_COOKIE } from './shell.ts';

/**
 * Browser sessions for the hosted pages (docs/pages.md). A request opts in with this header; API
 * clients that never send it keep using bodies and bearer tokens exactly as before. A custom header
 * cannot be sent cross-origin without a CORS preflight, which Gatehouse never grants for it.
 */
export const SESSION_HEADER = 'x-gatehouse-session';
export const REFRESH_COOKIE = 'gatehouse_refresh';
export const REFRESH_PATH = '/api/v1/refresh-token';
export const LOGOUT_PATH = '/api/v1/logout';

type Role = 'issue' | 'refresh' | 'logout';

const cookieMode = new WeakSet<FastifyRequest>();

/** Whether a response schema is a token response (it carries a refresh token). */
function carriesRefreshToken(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { properties?: Record<string, unknown>; allOf?: unknown[]; anyOf?: unknown[] };
  if (s.properties && 'refresh_token' in s.properties) return true;
  return [...(s.allOf ?? []), ...(s.anyOf ?? [])].some(carriesRefreshToken);
}

function roleOf(route: RouteOptions): Role | null {
  if (route.method !== 'POST' && route.method !== 'PUT') return null;
  if (route.url === REFRESH_PATH) return 'refresh';
  if (route.url === LOGOUT_PATH) return 'logout';
  const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
  return carriesRefreshToken(response?.['200']) ? 'issue' : null;
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]';
}

/** Whether cookies of PUBLIC_URL go without `Secure` (plain http on a loopback host only). */
export function cookiesInsecure(ctx: AppContext): boolean {
  const publicUrl = new URL(ctx.config.publicUrl);
  return publicUrl.protocol !== 'https:' && isLoopbackHost(publicUrl.hostname);
}

/**
 * The name and path of a cookie Gatehouse sets itself. On an https PUBLIC_URL at the origin's root,
 * `__Host-<name>` with `Path=/` (always Secure, never a Domain): a browser keeps such a cookie only
 * from this very host, so a sibling subdomain cannot plant or overwrite one (docs/pages.md,
 * "Cookies"). Elsewhere the plain name on its narrow path: on http (development) the prefix is not
 * allowed, and under a PUBLIC_URL with a path, `Path=/` would hand the cookie to the origin's other
 * applications.
 */
export function ownCookie(ctx: AppContext, name: string, narrowPath: string): { name: string; path: string } {
  const publicUrl = new URL(ctx.config.publicUrl);
  const basePath = publicUrl.pathname.replace(/\/+$/, '');
  if (publicUrl.protocol === 'https:' && basePath === '') return { name: `__Host-${name}`, path: '/' };
  return { name, path: `${basePath}${narrowPath}` };
}

/** The value of one of Gatehouse's own cookies in a request (under its name for this PUBLIC_URL). */
export function ownCookieValue(
  ctx: AppContext,
  request: FastifyRequest,
  name: string,
  narrowPath: string,
): string | undefined {
  return parseCookie(request.headers.cookie ?? '')[ownCookie(ctx, name, narrowPath).name];
}

/**
 * The `Set-Cookie` value of the browser session's refresh cookie (HttpOnly, SameSite=Strict, Secure
 * unless PUBLIC_URL is a loopback http address; `__Host-` on https, else scoped to the refresh path).
 * Token routes set it in cookie mode; a provider sign-in (docs/api.md §18) sets it when its callback
 * completes, so the pages continue exactly as after a password sign-in.
 */
export function refreshCookie(ctx: AppContext, value: string, maxAge: number): string {
  return stringifySetCookie({
    ...ownCookie(ctx, REFRESH_COOKIE, REFRESH_PATH),
    value,
    httpOnly: true,
    sameSite: 'strict',
    secure: !cookiesInsecure(ctx),
    maxAge,
  });
}

function asArray<T>(hook: T | T[] | undefined): T[] {
  if (hook === undefined) return [];
  return Array.isArray(hook) ? hook : [hook];
}

/**
 * Adds cookie mode to every token-issuing route (any whose 200 answer carries `refresh_token`: login,
 * refresh, invitation set-password, change-password, login/mfa, login/passkey, idp verify) and to
 * logout. Must be called before the routes are added. In cookie mode:
 * - `Origin` must equal PUBLIC_URL's origin (else 403 `forbidden`): the CSRF check;
 * - a token answer's refresh token moves from the body into an HttpOnly, SameSite=Strict cookie
 *   (refreshCookie), so page scripts never see it;
 * - refresh reads the token from that cookie (no body; without the cookie, 204: nobody is signed in),
 *   and logout clears it.
 */
export function installBrowserSession(
  app: FastifyInstance,
  ctx: AppContext,
  warnAddress: AddressWarning,
): void {
  const origin = new URL(ctx.config.publicUrl).origin;
  const setCookie = (reply: FastifyReply, value: string, maxAge: number) =>
    reply.header('set-cookie', refreshCookie(ctx, value, maxAge));

  const wrongAddress = `Signing in works only at ${ctx.config.publicUrl}. Open this page there and try again.`;

  const admit: onRequestHookHandler = (request, _reply, done) => {
    const mode = request.headers[SESSION_HEADER];
    if (mode === undefined) return done();
    if (mode !== 'cookie') {
      return done(new ApiError('validation_failed', { detail: `${SESSION_HEADER} must be "cookie"` }));
    }
    if (!ctx.modules.isEnabled('pages') && !ctx.modules.isEnabled('console')) {
      return done(new ApiError('module_disabled', { detail: 'Browser sessions need the pages module' }));
    }
    if (request.headers.origin !== origin) {
      // The operator's log gets the technical line, once; the person a sentence the page shows as is
      // (a page opened at another address than PUBLIC_URL: docs/pages.md, "One address").
      warnAddress(
        { origin: request.headers.origin ?? null },
        "a browser session was refused: its Origin is not PUBLIC_URL's origin (cookie sessions need it, docs/pages.md); set PUBLIC_URL to the address people open the pages at",
      );
      return done(new ApiError('forbidden', { detail: wrongAddress }));
    }
    cookieMode.add(request);
    done();
  };

  // The refresh token comes from the cookie; a page never holds one to send. No cookie at all is
  // the answer "nobody is signed in in this browser": 204, no body, so a page's ordinary first load
  // (it asks whether a session exists) logs no failed request in the browser's console. A cookie
  // that no longer works stays 401 `refresh_token_invalid`, and is cleared.
  const fromCookie: preValidationHookHandler = (request, reply, done) => {
    if (!cookieMode.has(request)) return done();
    const body = request.body as Record<string, unknown> | null | undefined;
    if (body !== undefined && body !== null && Object.keys(body).length > 0) {
      return done(new ApiError('validation_failed', { detail: 'A cookie refresh takes no body' }));
    }
    const token = ownCookieValue(ctx, request, REFRESH_COOKIE, REFRESH_PATH);
    if (!token) {
      reply.code(204).header('cache-control', 'no-store').send();
      return;
    }
    request.body = { refresh_token: token };
    done();
  };

  const onSendFor =
    (role: Role): onSendHookHandler =>
    (request, reply, payload, done) => {
      if (!cookieMode.has(request)) return done(null, payload);
      if (role === 'logout' || (role === 'refresh' && reply.statusCode === 401)) {
        setCookie(reply, '', 0);
        return done(null, payload);
      }
      if (reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload);
      const body = JSON.parse(payload) as Record<string, unknown>;
      if (typeof body.refresh_token !== 'string') return done(null, payload);
      const maxAge = typeof body.refresh_expires_in === 'number' ? body.refresh_expires_in : 0;
      setCookie(reply, body.refresh_token, maxAge);
      if (role === 'issue') rememberUserLanguage(request, reply, body.user);
      delete body.refresh_token;
      done(null, JSON.stringify(body));
    };

  // Signing in sets the picker's cookie to the user's `locale` unless the person chose in the picker
  // (the cookie is there): the next page shows the account's language from its first paint.
  const rememberUserLanguage = (request: FastifyRequest, reply: FastifyReply, user: unknown) => {
    const locale = (user as { locale?: unknown } | undefined)?.locale;
    if (typeof locale !== 'string') return;
    if (parseCookie(request.headers.cookie ?? '')[LANG_COOKIE] !== undefined) return;
    const tag = lookupOne(locale, ctx.languages.tags);
    if (tag !== null) reply.header('set-cookie', languageCookie(tag));
  };

  app.addHook('onRoute', (route) => {
    const role = roleOf(route);
    if (role === null) return;
    route.onRequest = [...asArray(route.onRequest), admit];
    if (role === 'refresh') route.preValidation = [fromCookie, ...asArray(route.preValidation)];
    route.onSend = [...asArray(route.onSend), onSendFor(role)];
  });
}
