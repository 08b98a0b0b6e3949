import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Endpoint, endpoint } from '../../../http/endpoint.ts';
import { requireAuth } from '../../../http/guard.ts';
import { ownCookieValue } from '../../../http/pages/index.ts';
import { reserveOrThrow } from '../../../identity/budgets/attempt-budget.ts';
import { clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ProviderParams } from '../admin/providers.schemas.ts';
import { enabledProviders } from '../upstream/providers.service.ts';
import type { Upstreams } from '../upstream/upstream.ts';
import {
  CallbackFields,
  ContinueResponse,
  FreshProofBody,
  IdentityList,
  IdentityParams,
  LinkResponse,
  StartQuery,
} from './flow.schemas.ts';
import { finishFlow, type Started, takeSecondFactor } from './flow.service.ts';
import {
  FLOW_COOKIE,
  FLOW_COOKIE_PATH,
  flowCookie,
  landingPage,
  SECOND_FACTOR_COOKIE,
  SECOND_FACTOR_COOKIE_PATH,
  samlFlowCookie,
  secondFactorCookie,
} from './flow-http.ts';
import { assertFreshSession, identitiesOf, isFresh, unlinkIdentity } from './link.service.ts';
import { checkReturnTo } from './return-to.ts';
import { startAnyFlow } from './start-any.ts';
import { startBudget } from './start-budget.ts';

const Buttons = Type.Object({
  data: Type.Array(
    Type.Object({
      name: Type.String(),
      display_name: Type.String(),
      icon: Type.String(),
      start_url: Type.String(),
    }),
  ),
});

/** The redirect flow of the `providers` module (docs/api.md §18): sign-in, linking, identities. */
export function flowEndpoints(ctx: AppContext, upstreams: Upstreams): Endpoint[] {
  const callback = async (
    req: FastifyRequest<{ Params: { name: string } }>,
    reply: FastifyReply,
    fields: Record<string, string>,
  ): Promise<FastifyReply> => {
    const { name } = req.params;
    const url = new URL(`${ctx.config.publicUrl.replace(/\/+$/, '')}/api/v1/idp/${name}/callback`);
    let current: URL | Request = url;
    if (req.method === 'GET') {
      for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
    } else {
      current = new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    }
    const landing = await finishFlow(
      ctx,
      upstreams,
      name,
      current,
      ownCookieValue(ctx, req, FLOW_COOKIE, FLOW_COOKIE_PATH),
      clientInfo(req),
    );
    // The flow's cookie is spent whatever happened.
    reply.header('set-cookie', flowCookie(ctx, '', 0, false));
    return landingPage(ctx, reply, landing);
  };

  // A SAML connection's flow cookie goes to its ACS (docs/api.md §23); every other to the callback.
  const startCookie = (started: Started) =>
    started.saml
      ? samlFlowCookie(ctx, started.browserToken, 600)
      : flowCookie(ctx, started.browserToken, 600, started.crossSitePost);

  return [
    endpoint({
      group: 'idp',
      label: 'start',
      method: 'GET',
      path: '/api/v1/idp/:name/start',
      access: 'public',
      issuesTokens: true,
      summary: 'Start a sign-in at a provider: 302 there, bound to this browser',
      schema: { params: ProviderParams, querystring: StartQuery },
      // A 302 to the provider with the flow's cookie.
      ownsReply: true,
      handler: async (req, reply) => {
        // Reserved first: a start costs a flow row and a provider's discovery (429 past the budget).
        await reserveOrThrow(ctx.db, [startBudget(req.ip)], 'Too many sign-ins started; try again later');
        const returnTo = await checkReturnTo(ctx, req.query.return_to);
        const started = await startAnyFlow(ctx, upstreams, req.params.name, returnTo, 'sign_in');
        return reply.header('set-cookie', startCookie(started)).redirect(started.location, 302);
      },
    }),
    endpoint({
      group: 'idp',
      label: 'callback',
      method: 'GET',
      path: '/api/v1/idp/:name/callback',
      access: 'public',
      issuesTokens: true,
      summary: "The provider's answer: signs in (or links) and continues to return_to",
      schema: { params: ProviderParams, querystring: CallbackFields },
      // Spends the flow's cookie, sets the session's, and redirects to the landing page.
      ownsReply: true,
      handler: (req, reply) => callback(req, reply, req.query as Record<string, string>),
    }),
    endpoint({
      group: 'idp',
      label: 'callback_form_post',
      method: 'POST',
      path: '/api/v1/idp/:name/callback',
      access: 'public',
      hidden: true,
      issuesTokens: true,
      summary: "The provider's answer by form_post (Apple)",
      schema: { params: ProviderParams, body: CallbackFields },
      // As the GET callback: cookies and a redirect.
      ownsReply: true,
      handler: (req, reply) => callback(req, reply, req.body as Record<string, string>),
    }),
    endpoint({
      group: 'idp',
      label: 'continue',
      method: 'POST',
      path: '/api/v1/idp/continue',
      access: 'public',
      hidden: true,
      issuesTokens: true,
      summary: 'The pending second factor of a provider sign-in, for the hosted sign-in page (once)',
      schema: { response: { 200: ContinueResponse } },
      // Spends the second factor's cookie (on refusals too: it is cleared before the answer is known).
      ownsReply: true,
      handler: async (req, reply) => {
        reply.header('set-cookie', secondFactorCookie(ctx, '', 0));
        return reply.send(
          await takeSecondFactor(
            ctx,
            ownCookieValue(ctx, req, SECOND_FACTOR_COOKIE, SECOND_FACTOR_COOKIE_PATH),
          ),
        );
      },
    }),
    endpoint({
      group: 'idp',
      label: 'buttons',
      method: 'GET',
      path: '/api/v1/idp/buttons',
      access: 'public',
      hidden: true,
      summary: "The enabled providers' sign-in buttons, for the hosted sign-in page",
      schema: { response: { 200: Buttons } },
      handler: async () => ({
        data: (await enabledProviders(ctx)).map((p) => ({
          name: p.name,
          display_name: p.displayName,
          icon: p.preset ?? 'generic',
          start_url: `${new URL(ctx.config.publicUrl).pathname.replace(/\/+$/, '')}/api/v1/idp/${p.name}/start`,
        })),
      }),
    }),
    endpoint({
      group: 'idp',
      label: 'identities',
      method: 'GET',
      path: '/api/v1/idp/identities',
      access: 'authenticated',
      summary: 'Your linked external identities',
      schema: { response: { 200: IdentityList } },
      handler: (req) => identitiesOf(ctx, requireAuth(req).user.id),
    }),
    endpoint({
      group: 'idp',
      label: 'link',
      apiKeys: 'refused',
      method: 'GET',
      path: '/api/v1/idp/:name/link',
      access: 'authenticated',
      summary: 'Start linking a provider to your account (needs a sign-in from the last 5 minutes)',
      schema: { params: ProviderParams, querystring: StartQuery, response: { 200: LinkResponse } },
      // Sets the flow's cookie beside the answer.
      ownsReply: true,
      handler: async (req, reply) => {
        const auth = requireAuth(req);
        assertFreshSession(auth.claims.auth_time);
        const returnTo = await checkReturnTo(ctx, req.query.return_to);
        const started = await startAnyFlow(ctx, upstreams, req.params.name, returnTo, 'link', {
          userId: auth.user.id,
          sessionId: auth.session.id,
        });
        return reply.header('set-cookie', startCookie(started)).send({ authorization_url: started.location });
      },
    }),
    endpoint({
      group: 'idp',
      label: 'identity_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/idp/identities/:id',
      access: 'authenticated',
      summary: 'Unlink one of your identities after a fresh proof; never your last way to sign in',
      schema: { params: IdentityParams, body: FreshProofBody, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        const auth = requireAuth(req);
        const fed = isFresh(auth.claims.auth_time) && (auth.claims.amr ?? []).includes('fed');
        await unlinkIdentity(ctx, auth.user, req.params.id, req.body, clientInfo(req), fed);
      },
    }),
  ];
}
