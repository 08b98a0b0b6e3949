import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../../http/endpoint.ts';
import { requireAuth } from '../../../http/guard.ts';
import { createPageRenderer, loadPageAssets, usableModules } from '../../../http/pages/index.ts';
import { clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../../kernel/module.ts';
import { ASSET_PATH } from '../../pages/index.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import { INTERACTION_PATH } from './authorization-server.ts';
import {
  finishConsent,
  finishLogin,
  interactionUiLocales,
  interactionView,
  refuseOrganization,
} from './interactions.service.ts';
import { pinToPublicUrl } from './mount.ts';

const UidParams = Type.Object({ uid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' }) });
const Redirect = Type.Object({ redirect_to: Type.String() });
const Described = Type.Object({ name: Type.String(), description: Type.String() });
const View = Type.Object({
  prompt: Type.String(),
  client: Type.Object({ client_id: Type.String(), name: Type.String(), first_party: Type.Boolean() }),
  scopes: Type.Array(Described),
  apis: Type.Array(
    Type.Object({ identifier: Type.String(), name: Type.String(), scopes: Type.Array(Described) }),
  ),
});
const ConsentBody = Type.Object({ allow: Type.Boolean() }, { additionalProperties: false });

/**
 * The hosted half of the code flow (docs/oauth.md): the page the library sends the browser to, and
 * the calls its script makes. They live under the interaction's path, where the library's
 * interaction cookie is sent. Hidden from the index, like every page.
 */
export function interactionEndpoints(
  ctx: AppContext,
  modules: ModuleDirectory,
  server: AuthorizationServer,
): Endpoint[] {
  const renderer = createPageRenderer(ctx.config, loadPageAssets(ctx.config), ASSET_PATH);
  const raw = (
    req: { raw: import('node:http').IncomingMessage },
    reply: { raw: import('node:http').ServerResponse },
  ) => {
    // The library sees PUBLIC_URL's origin here too (mount.ts): its cookies' flags follow it.
    pinToPublicUrl(ctx, req.raw);
    return { req: req.raw, res: reply.raw };
  };
  return [
    endpoint({
      group: 'oauth',
      label: 'interaction_page',
      method: 'GET',
      path: `${INTERACTION_PATH}/:uid`,
      access: 'public',
      hidden: true,
      summary: 'Sign-in and consent for an application',
      schema: { hide: true, params: UidParams },
      // An HTML page, sent by the renderer.
      ownsReply: true,
      handler: async (req, reply) =>
        renderer.send(reply, {
          title: 'Sign in to an application',
          titleKey: 'page.authorize.sign_in_to_an_application',
          fragment: 'authorize',
          script: 'authorize.js',
          modules: usableModules(modules, (m) => ctx.modules.isEnabled(m)),
          uiLocales: await interactionUiLocales(server, raw(req, reply), req.params.uid),
        }),
    }),
    endpoint({
      group: 'oauth',
      label: 'interaction',
      method: 'GET',
      path: `${INTERACTION_PATH}/:uid/details`,
      access: 'public',
      hidden: true,
      summary: 'What the application asks for',
      schema: { hide: true, params: UidParams, response: { 200: View } },
      // oidc-provider reads the interaction through the raw request and response (its cookie; a
      // cookie whose signature fails is cleared on the response): the handler needs the reply.
      ownsReply: true,
      handler: async (req, reply) =>
        reply
          .header('cache-control', 'no-store')
          .send(await interactionView(ctx, server, raw(req, reply), req.params.uid)),
    }),
    endpoint({
      group: 'oauth',
      label: 'interaction_login',
      method: 'POST',
      path: `${INTERACTION_PATH}/:uid/login`,
      access: 'authenticated',
      hidden: true,
      summary: 'Continues the request as the signed-in account',
      schema: { hide: true, params: UidParams, response: { 200: Redirect } },
      // As above: the library reads (and may clear) its interaction cookie on the raw reply.
      ownsReply: true,
      handler: async (req, reply) =>
        reply.send(await finishLogin(ctx, server, raw(req, reply), req.params.uid, requireAuth(req))),
    }),
    endpoint({
      group: 'oauth',
      label: 'interaction_back',
      method: 'POST',
      path: `${INTERACTION_PATH}/:uid/back`,
      access: 'public',
      hidden: true,
      summary: 'Returns to the application refusing an organization the account is not a member of',
      schema: { hide: true, params: UidParams, response: { 200: Redirect } },
      // As above: the library reads (and may clear) its interaction cookie on the raw reply.
      ownsReply: true,
      handler: async (req, reply) =>
        reply.send(await refuseOrganization(server, raw(req, reply), req.params.uid)),
    }),
    endpoint({
      group: 'oauth',
      label: 'interaction_consent',
      method: 'POST',
      path: `${INTERACTION_PATH}/:uid/consent`,
      access: 'authenticated',
      hidden: true,
      summary: 'Allows or denies what the application asks for',
      schema: { hide: true, params: UidParams, body: ConsentBody, response: { 200: Redirect } },
      // As above: the library reads (and may clear) its interaction cookie on the raw reply.
      ownsReply: true,
      handler: async (req, reply) =>
        reply.send(
          await finishConsent(
            ctx,
            server,
            raw(req, reply),
            req.params.uid,
            requireAuth(req),
            req.body.allow,
            clientInfo(req),
          ),
        ),
    }),
  ];
}
