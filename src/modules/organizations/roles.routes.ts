import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { callerOf, createdOrChanged } from './caller.ts';
import {
  PutRoleBody,
  PutUserRolesBody,
  RoleList,
  RoleParams,
  RoleSchema,
  UserIdParams,
  UserRolesSchema,
} from './roles.schemas.ts';
import { getRoles, getUserRoles, putRole, putUserRoles, removeRole } from './roles.service.ts';

/** docs/api.md §21: the role catalogue (admin) and the roles a user holds globally. */
export function roleEndpoints(ctx: AppContext): Endpoint[] {
  const answer = createdOrChanged();
  return [
    endpoint({
      group: 'roles',
      label: 'list',
      method: 'GET',
      path: '/api/v1/roles',
      access: 'admin',
      summary: 'The role catalogue',
      schema: { response: { 200: RoleList } },
      handler: () => getRoles(ctx),
    }),
    endpoint({
      group: 'roles',
      label: 'put',
      method: 'PUT',
      path: '/api/v1/roles/:name',
      access: 'admin',
      summary: 'Create or replace a role (201 created, 200 replaced)',
      schema: { params: RoleParams, body: PutRoleBody, response: { 200: RoleSchema, 201: RoleSchema } },
      statusOf: answer.status,
      handler: async (req) => {
        const { created, role } = await putRole(ctx, req.params.name, req.body, callerOf(req));
        return answer.mark(role, created);
      },
    }),
    endpoint({
      group: 'roles',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/roles/:name',
      access: 'admin',
      summary: 'Delete a role nobody holds',
      schema: { params: RoleParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await removeRole(ctx, req.params.name, callerOf(req));
      },
    }),
    endpoint({
      group: 'users',
      label: 'roles',
      method: 'GET',
      path: '/api/v1/users/:id/roles',
      access: 'authenticated',
      summary: "A user's global roles and their roles in each organization (admin, or the user themself)",
      schema: { params: UserIdParams, response: { 200: UserRolesSchema } },
      handler: (req) => getUserRoles(ctx, req.params.id, callerOf(req)),
    }),
    endpoint({
      group: 'users',
      label: 'roles_put',
      method: 'PUT',
      path: '/api/v1/users/:id/roles',
      access: 'admin',
      summary: "Set a user's global roles",
      schema: { params: UserIdParams, body: PutUserRolesBody, response: { 200: UserRolesSchema } },
      handler: (req) => putUserRoles(ctx, req.params.id, req.body.roles, callerOf(req)),
    }),
  ];
}
