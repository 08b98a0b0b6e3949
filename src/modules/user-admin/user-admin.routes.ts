import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo, UserSchema } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { requestActor } from '../audit/index.ts';
import { CreateBody, createUser, deleteUser, IdParams } from '../users/index.ts';

/** The user_admin module (docs/api.md §6): admins create and delete accounts. */
export function userAdminEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'users',
      label: 'create',
      method: 'POST',
      path: '/api/v1/users',
      access: 'admin',
      summary: 'Create a user (without a password the account cannot log in with one)',
      schema: { body: CreateBody, response: { 201: UserSchema } },
      status: 201,
      location: (user) => `/api/v1/users/${user.id}`,
      handler: (req) => createUser(ctx, req.body, { actor: requestActor(req), client: clientInfo(req) }),
    }),
    endpoint({
      group: 'users',
      label: 'delete',
      method: 'DELETE',
      path: '/api/v1/users/:id',
      access: 'admin',
      summary: 'Delete a user with their sessions, identities and invitations',
      schema: { params: IdParams, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) =>
        deleteUser(ctx, requireAuth(req).user, req.params.id, {
          actor: requestActor(req),
          client: clientInfo(req),
        }),
    }),
  ];
}
