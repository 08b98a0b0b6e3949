import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint, type HttpMethod } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { requestActor } from '../audit/index.ts';
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  rotateClientSecret,
  updateClient,
} from './clients/clients.service.ts';
import { registrationHandoff } from './clients/registration-route.ts';
import { createRegistrationToken } from './clients/registration-tokens.service.ts';
import {
  ClientCreateBody,
  ClientIdParams,
  ClientList,
  ClientSchema,
  ClientUpdateBody,
  ClientWithSecret,
  RegistrationTokenBody,
  RegistrationTokenSchema,
  ResourceCreateBody,
  ResourceList,
  ResourceSchema,
  ResourceUpdateBody,
} from './oauth.schemas.ts';
import {
  createResource,
  deleteResource,
  listResources,
  updateResource,
} from './resources/resources.service.ts';
import { type AuthorizationServer, OAUTH_ROUTES } from './server/authorization-server.ts';
import { connectedApps, revokeConnectedApp } from './server/consents.service.ts';
import { interactionEndpoints } from './server/interactions.routes.ts';
import { passToAuthorizationServer } from './server/mount.ts';

/**
 * The `oauth` module (docs/api.md §17): oidc-provider's protocol endpoints, handed over unparsed,
 * and the admin API of clients and resources.
 */
export function oauthEndpoints(
  ctx: AppContext,
  modules: ModuleDirectory,
  server: AuthorizationServer,
): Endpoint[] {
  return [
    ...protocolEndpoints(ctx, server),
    ...interactionEndpoints(ctx, modules, server),
    ...grantEndpoints(ctx),
    ...clientEndpoints(ctx, server),
    ...resourceEndpoints(ctx),
  ];
}

/** The endpoints oidc-provider serves with CORS, each with its preflight. */
const PREFLIGHTED = ['token', 'userinfo', 'introspection', 'revocation'] as const;

function protocolEndpoints(ctx: AppContext, server: AuthorizationServer): Endpoint[] {
  const raw = (label: string, method: HttpMethod, path: string, summary: string, hidden = false) =>
    endpoint({
      group: 'oauth',
      label,
      method,
      path,
      access: 'public',
      // oidc-provider's Koa handler writes the raw response (docs/api.md §17).
      ownsReply: true,
      raw: true,
      hidden,
      summary,
      schema: {},
      handler: async (req, reply) => {
        await passToAuthorizationServer(ctx, server, req, reply);
        return reply;
      },
    });
  const registration = ctx.config.oauth.dynamicRegistration !== 'off';
  return [
    raw('authorize', 'GET', OAUTH_ROUTES.authorization, 'Authorization endpoint (code flow with PKCE)'),
    raw('authorize_resume', 'GET', `${OAUTH_ROUTES.authorization}/:uid`, 'Resumes an authorization', true),
    raw('token', 'POST', OAUTH_ROUTES.token, 'Token endpoint'),
    raw('userinfo', 'GET', OAUTH_ROUTES.userinfo, 'UserInfo endpoint'),
    raw('userinfo_post', 'POST', OAUTH_ROUTES.userinfo, 'UserInfo endpoint (POST)', true),
    raw('introspect', 'POST', OAUTH_ROUTES.introspection, 'Token introspection (RFC 7662)'),
    raw('revoke', 'POST', OAUTH_ROUTES.revocation, 'Token revocation (RFC 7009)'),
    // CORS preflights of the endpoints a browser app calls (docs/api.md §17): the library answers
    // them (its cors middleware); the request that follows is checked against the client's origins.
    ...PREFLIGHTED.map((route) =>
      raw(`${route}_preflight`, 'OPTIONS', OAUTH_ROUTES[route], `CORS preflight of ${route}`, true),
    ),
    raw('end_session', 'GET', OAUTH_ROUTES.end_session, 'RP-initiated logout'),
    raw('end_session_confirm', 'POST', `${OAUTH_ROUTES.end_session}/confirm`, 'Logout confirmation', true),
    raw('end_session_success', 'GET', `${OAUTH_ROUTES.end_session}/success`, 'Logout done', true),
    ...(registration
      ? [
          endpoint({
            group: 'oauth',
            label: 'register',
            method: 'POST',
            path: OAUTH_ROUTES.registration,
            access: 'public',
            ownsReply: true,
            raw: true,
            summary: 'Dynamic client registration (RFC 7591)',
            schema: {},
            handler: async (req, reply) => {
              await registrationHandoff(ctx, server, req, reply);
              return reply;
            },
          }),
          raw(
            'register_read',
            'GET',
            `${OAUTH_ROUTES.registration}/:client_id`,
            'Registered client (RFC 7592 read)',
            true,
          ),
        ]
      : []),
  ];
}

const ConnectedApp = Type.Object({
  client_id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  resources: Type.Record(Type.String(), Type.Array(Type.String())),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const GrantParams = Type.Object({ client_id: Type.String({ maxLength: 512 }) });

/** Connected apps: what the signed-in user allowed, and taking it back (docs/api.md §17). */
function grantEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'grants',
      method: 'GET',
      path: '/api/v1/grants',
      access: 'authenticated',
      summary: 'Applications you allowed to use your account',
      schema: { response: { 200: Type.Object({ data: Type.Array(ConnectedApp) }) } },
      handler: (req) => connectedApps(ctx, requireAuth(req).user.id),
    }),
    endpoint({
      group: 'auth',
      label: 'grant_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/grants/:client_id',
      access: 'authenticated',
      summary: 'Revokes an application: its consent, grants and tokens',
      schema: { params: GrantParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await revokeConnectedApp(ctx, requireAuth(req).user.id, req.params.client_id);
      },
    }),
  ];
}

function clientEndpoints(ctx: AppContext, server: AuthorizationServer): Endpoint[] {
  return [
    endpoint({
      group: 'clients',
      label: 'list',
      method: 'GET',
      path: '/api/v1/clients',
      access: 'admin',
      summary: 'Registered OAuth clients',
      schema: { response: { 200: ClientList } },
      handler: () => listClients(ctx),
    }),
    endpoint({
      group: 'clients',
      label: 'create',
      method: 'POST',
      path: '/api/v1/clients',
      access: 'admin',
      issuesTokens: true,
      summary: 'Registers a client; a confidential client’s secret is shown this once',
      schema: { body: ClientCreateBody, response: { 201: ClientWithSecret } },
      status: 201,
      handler: (req) => createClient(ctx, req.body),
    }),
    endpoint({
      group: 'clients',
      label: 'get',
      method: 'GET',
      path: '/api/v1/clients/:id',
      access: 'admin',
      summary: 'One client',
      schema: { params: ClientIdParams, response: { 200: ClientSchema } },
      handler: (req) => getClient(ctx, req.params.id),
    }),
    endpoint({
      group: 'clients',
      label: 'update',
      method: 'PUT',
      path: '/api/v1/clients/:id',
      access: 'admin',
      summary: 'Changes a client',
      schema: { params: ClientIdParams, body: ClientUpdateBody, response: { 200: ClientSchema } },
      handler: (req) => updateClient(ctx, req.params.id, req.body),
    }),
    endpoint({
      group: 'clients',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/clients/:id',
      access: 'admin',
      summary: 'Removes a client',
      schema: { params: ClientIdParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await deleteClient(ctx, req.params.id);
      },
    }),
    endpoint({
      group: 'clients',
      label: 'secret',
      method: 'POST',
      path: '/api/v1/clients/:id/secret',
      access: 'admin',
      issuesTokens: true,
      summary: 'A new client secret, shown this once; the old one stops working',
      schema: { params: ClientIdParams, response: { 200: ClientWithSecret } },
      handler: (req) => rotateClientSecret(ctx, req.params.id),
    }),
    endpoint({
      group: 'clients',
      label: 'registration_token',
      method: 'POST',
      path: '/api/v1/clients/registration-tokens',
      access: 'admin',
      issuesTokens: true,
      summary: 'An initial access token for dynamic registration, shown this once; it registers one client',
      schema: { body: RegistrationTokenBody, response: { 201: RegistrationTokenSchema } },
      status: 201,
      handler: (req) =>
        createRegistrationToken(ctx, server, req.body.ttl_s, {
          actor: requestActor(req),
          client: clientInfo(req),
        }),
    }),
  ];
}

function resourceEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'resources',
      label: 'list',
      method: 'GET',
      path: '/api/v1/resources',
      access: 'admin',
      summary: 'Registered APIs (RFC 8707 resources)',
      schema: { response: { 200: ResourceList } },
      handler: () => listResources(ctx),
    }),
    endpoint({
      group: 'resources',
      label: 'create',
      method: 'POST',
      path: '/api/v1/resources',
      access: 'admin',
      summary: 'Registers an API',
      schema: { body: ResourceCreateBody, response: { 201: ResourceSchema } },
      status: 201,
      handler: (req) => createResource(ctx, req.body),
    }),
    endpoint({
      group: 'resources',
      label: 'update',
      method: 'PUT',
      path: '/api/v1/resources/:id',
      access: 'admin',
      summary: 'Changes an API',
      schema: { params: ClientIdParams, body: ResourceUpdateBody, response: { 200: ResourceSchema } },
      handler: (req) => updateResource(ctx, req.params.id, req.body),
    }),
    endpoint({
      group: 'resources',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/resources/:id',
      access: 'admin',
      summary: 'Removes an API no client uses',
      schema: { params: ClientIdParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await deleteResource(ctx, req.params.id);
      },
    }),
  ];
}
