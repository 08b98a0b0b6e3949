import { stringifySetCookie } from 'cookie';
import type { FastifyReply } from 'fastify';
import { cookiesInsecure, escapeHtml, ownCookie, refreshCookie } from '../../../http/pages/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { Landing } from './flow.service.ts';

/** Binds a redirect flow to the browser that started it (docs/api.md §18). */
export const FLOW_COOKIE = 'gatehouse_idp_flow';
/** Binds a provider sign-in's pending second factor to the browser, for the sign-in page to continue. */
export const SECOND_FACTOR_COOKIE = 'gatehouse_idp_mfa';
/** Their paths when they cannot be `__Host-` cookies (http, a PUBLIC_URL with a path: ownCookie). */
export const FLOW_COOKIE_PATH = '/api/v1/idp/';
export const SECOND_FACTOR_COOKIE_PATH = '/api/v1/idp/continue';
/** A SAML connection's flow (docs/api.md §23): the IdP POSTs to /saml/<name>/acs. */
export const SAML_FLOW_COOKIE = 'gatehouse_saml_flow';
export const SAML_FLOW_COOKIE_PATH = '/saml/';

const basePath = (ctx: AppContext) => new URL(ctx.config.publicUrl).pathname.replace(/\/+$/, '');

/**
 * The flow cookie: HttpOnly, Secure (except on a loopback PUBLIC_URL), `__Host-` on https (else
 * scoped to the provider paths: ownCookie), 10 minutes. `SameSite=Lax` goes with the provider's redirect back (a top-level GET); a `form_post`
 * provider answers with a cross-site POST, which only a `SameSite=None` cookie (always Secure) goes with.
 */
export function flowCookie(ctx: AppContext, value: string, maxAge: number, crossSitePost: boolean): string {
  return stringifySetCookie({
    ...ownCookie(ctx, FLOW_COOKIE, FLOW_COOKIE_PATH),
    value,
    httpOnly: true,
    secure: crossSitePost || !cookiesInsecure(ctx),
    sameSite: crossSitePost ? 'none' : 'lax',
    maxAge,
  });
}

/**
 * A SAML connection's flow cookie (docs/api.md §23, settled): HttpOnly, `SameSite=None; Secure` on
 * localhost too (browsers treat it as secure), so the IdP's cross-site POST to the ACS carries it.
 */
export function samlFlowCookie(ctx: AppContext, value: string, maxAge: number): string {
  return stringifySetCookie({
    ...ownCookie(ctx, SAML_FLOW_COOKIE, SAML_FLOW_COOKIE_PATH),
    value,
    httpOnly: true,
    secure: true,
    sameSite: 'none',
    maxAge,
  });
}

/** The pending second factor's cookie: read only by the sign-in page's same-origin call. */
export function secondFactorCookie(ctx: AppContext, value: string, maxAge: number): string {
  return stringifySetCookie({
    ...ownCookie(ctx, SECOND_FACTOR_COOKIE, SECOND_FACTOR_COOKIE_PATH),
    value,
    httpOnly: true,
    secure: !cookiesInsecure(ctx),
    sameSite: 'strict',
    maxAge,
  });
}

// Nothing runs on this page: it only moves on (a same-origin navigation, so the SameSite=Strict
// session cookie goes with the next request) and offers a link for browsers that ignore the refresh.
const CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Answers a callback. A refusal is a 302 to the sign-in page with the code (`?error=<code>`, nothing
 * else); everything else is a small same-origin page that continues to where the flow goes next.
 */
export function landingPage(ctx: AppContext, reply: FastifyReply, landing: Landing): FastifyReply {
  const base = basePath(ctx);
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (landing.kind === 'refused') {
    return reply.redirect(`${base}/account/sign-in?error=${encodeURIComponent(landing.code)}`, 302);
  }
  let next = landing.returnTo;
  if (landing.kind === 'signed_in') {
    reply.header('set-cookie', refreshCookie(ctx, landing.refreshToken, landing.refreshTtlS));
  } else if (landing.kind === 'second_factor') {
    reply.header('set-cookie', secondFactorCookie(ctx, landing.browserToken, 600));
    next = `${base}/account/sign-in?continue=provider`;
  }
  const href = escapeHtml(next);
  const app = escapeHtml(ctx.config.appName);
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Continuing to ${app}</title></head>
<body><main><p>Continuing to ${app}… <a href="${href}">Continue</a></p></main></body></html>
`;
  return reply
    .status(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CSP)
    .send(html);
}
