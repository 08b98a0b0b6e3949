import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml } from '../../../http/pages/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { clientPolicy } from '../clients/clients.service.ts';
import { autoSubmittedForm, logoutSource, renderError } from './pages.ts';

interface AuthorizationError {
  statusCode?: number;
  error?: string;
  error_description?: string;
}

/**
 * No open redirector through a client anyone may register (docs/oauth.md, "Open registration";
 * RFC 9700 §4.11.2). A client with `registered: true` chose its redirect URIs itself: an error
 * answer of `/oauth2/authorize` (a bad request, or `prompt=none` that cannot proceed) renders
 * Gatehouse's error page instead of sending the browser there without a click, and RP-initiated
 * logout always shows the confirmation page, even with no browser session (where the library's
 * page submits itself and redirects). Clients an admin created keep the library's behaviour.
 * Through the library's documented extension points: its `authorization.error` event marks the
 * request, a post-middleware rewrites the answer; registered after formPostPages, it runs first.
 */
export function guardRegisteredClients(ctx: AppContext, provider: Provider): void {
  const failed = new WeakMap<object, AuthorizationError>();
  provider.on('authorization.error', (...args: unknown[]) => {
    const [kctx, err] = args as [KoaContextWithOIDC, AuthorizationError];
    if (kctx.oidc?.route === 'authorization') failed.set(kctx, err);
  });
  const errorPage = renderError(ctx.config);
  const confirmPage = logoutSource(ctx.config);
  provider.use(async (kctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const route = kctx.oidc?.route;
    if (route !== 'authorization' && route !== 'end_session') return;
    const err = route === 'authorization' ? failed.get(kctx) : undefined;
    const form = route === 'end_session' ? autoSubmittedForm(kctx) : null;
    if (err === undefined && form === null) return;
    const clientId: string | undefined = kctx.oidc?.client?.clientId;
    if (clientId === undefined || (await clientPolicy(ctx, clientId))?.registered !== true) return;
    if (err !== undefined) {
      kctx.remove('location');
      // A `prompt=none` refusal carries the library's redirect status (303): a page answers 400.
      kctx.status = err.statusCode !== undefined && err.statusCode >= 400 ? err.statusCode : 400;
      await errorPage(kctx as never, {
        error: err.error ?? 'invalid_request',
        ...(err.error_description === undefined ? {} : { error_description: err.error_description }),
      });
      return;
    }
    const xsrf = form?.fields.find(([name]) => name === 'xsrf')?.[1];
    if (form === null || xsrf === undefined) return;
    // The library's confirmation form, as it writes it for a signed-in browser (end_session.js).
    kctx.status = 200;
    await confirmPage(
      kctx,
      `<form id="op.logoutForm" method="post" action="${escapeHtml(form.action)}"><input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}"/></form>`,
    );
  });
}
