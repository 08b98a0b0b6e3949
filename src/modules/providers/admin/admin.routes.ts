import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../../http/endpoint.ts';
import { requireAuth } from '../../../http/guard.ts';
import { clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { listProviders } from '../upstream/providers.service.ts';
import {
  CreateProviderBody,
  ProviderList,
  ProviderParams,
  ProviderSchema,
  UpdateProviderBody,
} from './providers.schemas.ts';
import { createProvider, deleteProvider, updateProvider } from './providers-admin.service.ts';

/** The admin API of the `providers` module (docs/api.md §18): list, create, update, delete. */
export function adminEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'idp',
      label: 'providers',
      method: 'GET',
      path: '/api/v1/idp/providers',
      access: 'admin',
      summary: 'List the external sign-in providers (secrets are never shown)',
      schema: { response: { 200: ProviderList } },
      handler: () => listProviders(ctx),
    }),
    endpoint({
      group: 'idp',
      label: 'provider_create',
      method: 'POST',
      path: '/api/v1/idp/providers',
      access: 'admin',
      summary: 'Add an external sign-in provider (presets: google, microsoft, gitlab, apple, github)',
      schema: { body: CreateProviderBody, response: { 201: ProviderSchema } },
      status: 201,
      location: (created) => `/api/v1/idp/providers/${created.name}`,
      handler: (req) => createProvider(ctx, req.body, requireAuth(req).user.id, clientInfo(req)),
    }),
    endpoint({
      group: 'idp',
      label: 'provider_update',
      method: 'PUT',
      path: '/api/v1/idp/providers/:name',
      access: 'admin',
      summary: 'Change a provider; secrets not sent stay as they are',
      schema: { params: ProviderParams, body: UpdateProviderBody, response: { 200: ProviderSchema } },
      handler: (req) =>
        updateProvider(ctx, req.params.name, req.body, requireAuth(req).user.id, clientInfo(req)),
    }),
    endpoint({
      group: 'idp',
      label: 'provider_delete',
      method: 'DELETE',
      path: '/api/v1/idp/providers/:name',
      access: 'admin',
      summary: 'Remove a provider (identities linked through it stay)',
      schema: { params: ProviderParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await deleteProvider(ctx, req.params.name, requireAuth(req).user.id, clientInfo(req));
      },
    }),
  ];
}
