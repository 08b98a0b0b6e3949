import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { callerOf } from './caller.ts';
import {
  CreateOrganizationBody,
  ListQuery,
  OrganizationPage,
  OrganizationParams,
  OrganizationSchema,
  UpdateOrganizationBody,
} from './organizations.schemas.ts';
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  patchOrganization,
  removeOrganization,
} from './organizations.service.ts';

/** docs/api.md §21: organizations. Tenancy is decided in the service from the caller and the path's id. */
export function organizationEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  return [
    endpoint({
      group: 'organizations',
      label: 'list',
      method: 'GET',
      path: '/api/v1/organizations',
      access: 'authenticated',
      summary:
        'Organizations: every one for an admin (q, limit, cursor); otherwise the caller’s own, with their roles',
      schema: { querystring: ListQuery, response: { 200: OrganizationPage } },
      handler: (req) => listOrganizations(ctx, req.query, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'create',
      method: 'POST',
      path: '/api/v1/organizations',
      access: 'authenticated',
      summary: 'Create an organization (admin; any active user with ORGANIZATIONS_SELF_SERVICE)',
      schema: { body: CreateOrganizationBody, response: { 201: OrganizationSchema } },
      status: 201,
      location: (o) => `/api/v1/organizations/${o.id}`,
      handler: (req) => createOrganization(ctx, req.body, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'get',
      method: 'GET',
      path: '/api/v1/organizations/:id',
      access: 'authenticated',
      summary: 'An organization (admin or member)',
      schema: { params: OrganizationParams, response: { 200: OrganizationSchema } },
      handler: (req) => getOrganization(ctx, req.params.id, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'update',
      method: 'PATCH',
      path: '/api/v1/organizations/:id',
      access: 'authenticated',
      summary: 'Change an organization (admin; org:settings:manage for all but domains)',
      schema: {
        params: OrganizationParams,
        body: UpdateOrganizationBody,
        response: { 200: OrganizationSchema },
      },
      handler: (req) => patchOrganization(ctx, modules, req.params.id, req.body, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/organizations/:id',
      access: 'admin',
      summary: 'Delete an organization, ending its memberships and invitations',
      schema: { params: OrganizationParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await removeOrganization(ctx, req.params.id, callerOf(req));
      },
    }),
  ];
}
