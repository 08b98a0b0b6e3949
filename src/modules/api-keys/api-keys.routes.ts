import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth, VERIFY_SCOPE } from '../../http/guard.ts';
import { clientInfo, UserSchema } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { requestActor } from '../audit/index.ts';
import {
  ApiKeySchema,
  ApiKeyWithSecret,
  CreateKeyBody,
  KeyPage,
  KeyParams,
  ListKeysQuery,
  ServiceAccountBody,
  VerifyBody,
  VerifyResponse,
} from './api-keys.schemas.ts';
import { createKey, getKey, listKeys, revokeKey } from './api-keys.service.ts';
import { verifyKey } from './key-use.service.ts';
import { createServiceAccount } from './service-accounts.service.ts';

const by = (req: Parameters<typeof requestActor>[0] & Parameters<typeof clientInfo>[0]) => ({
  actor: requestActor(req),
  client: clientInfo(req),
});

/** The api_keys module (docs/api.md §22): service accounts, keys, and verification for a team's API. */
export function apiKeyEndpoints(ctx: AppContext, directory: ModuleDirectory): Endpoint[] {
  return [
    endpoint({
      group: 'api_keys',
      label: 'service_account_create',
      method: 'POST',
      path: '/api/v1/service-accounts',
      access: 'admin',
      apiKeys: 'refused',
      summary: 'Create a service account (a user that acts only through keys)',
      schema: { body: ServiceAccountBody, response: { 201: UserSchema } },
      status: 201,
      location: (user) => `/api/v1/users/${user.id}`,
      handler: (req) => createServiceAccount(ctx, req.body, by(req), requireAuth(req)),
    }),
    endpoint({
      group: 'api_keys',
      label: 'list',
      method: 'GET',
      path: '/api/v1/api-keys',
      access: 'authenticated',
      summary: "Your keys (an admin: any owner's, or every key)",
      schema: { querystring: ListKeysQuery, response: { 200: KeyPage } },
      handler: (req) => listKeys(ctx, requireAuth(req).user, req.query),
    }),
    endpoint({
      group: 'api_keys',
      label: 'create',
      method: 'POST',
      path: '/api/v1/api-keys',
      access: 'authenticated',
      apiKeys: 'refused',
      summary: 'Create a key (the secret is in this answer only)',
      issuesTokens: true,
      schema: { body: CreateKeyBody, response: { 201: ApiKeyWithSecret } },
      status: 201,
      location: (created) => `/api/v1/api-keys/${created.id}`,
      handler: (req) => createKey(ctx, directory, requireAuth(req).user, req.body, by(req)),
    }),
    endpoint({
      group: 'api_keys',
      label: 'verify',
      method: 'POST',
      path: '/api/v1/api-keys/verify',
      access: 'authenticated',
      scope: VERIFY_SCOPE,
      oauthClients: true,
      summary: 'Check a key for your own API: its owner, scopes and roles, or why it is refused',
      schema: { body: VerifyBody, response: { 200: VerifyResponse } },
      handler: (req) => verifyKey(ctx, requireAuth(req), req.body.key),
    }),
    endpoint({
      group: 'api_keys',
      label: 'get',
      method: 'GET',
      path: '/api/v1/api-keys/:id',
      access: 'authenticated',
      summary: 'A key (never its secret)',
      schema: { params: KeyParams, response: { 200: ApiKeySchema } },
      handler: (req) => getKey(ctx, requireAuth(req).user, req.params.id),
    }),
    endpoint({
      group: 'api_keys',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/api-keys/:id',
      access: 'authenticated',
      apiKeys: 'refused',
      summary: 'Revoke a key, on every instance at once',
      schema: { params: KeyParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await revokeKey(ctx, requireAuth(req).user, req.params.id, by(req));
      },
    }),
  ];
}
