import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { IdParams } from '../users/index.ts';
import { revokeUserSession, sessionList, userSessionList } from './sessions.service.ts';

const SessionSchema = Type.Object({
  id: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.String(),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  amr: Type.Array(Type.String()),
  client: Type.Union([Type.Object({ client_id: Type.String(), name: Type.String() }), Type.Null()]),
  current: Type.Boolean(),
});
const SessionList = Type.Object({ data: Type.Array(SessionSchema) });
const UserSessionParams = Type.Object({
  id: Type.String({ maxLength: 512 }),
  session_id: Type.String({ maxLength: 512 }),
});

/** The sessions module (docs/api.md §13): a user's live sessions, for the user and for an admin. */
export function sessionEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'sessions',
      apiKeys: 'refused',
      method: 'GET',
      path: '/api/v1/sessions',
      access: 'authenticated',
      summary: 'Your live sessions',
      schema: { response: { 200: SessionList } },
      handler: (req) => {
        const auth = requireAuth(req);
        return sessionList(ctx, auth.user.id, auth);
      },
    }),
    endpoint({
      group: 'auth',
      label: 'session_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/sessions/:id',
      access: 'authenticated',
      summary: 'End one of your sessions',
      schema: { params: IdParams, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) => {
        const auth = requireAuth(req);
        return revokeUserSession(ctx, auth, auth.user.id, req.params.id, clientInfo(req));
      },
    }),
    endpoint({
      group: 'users',
      label: 'sessions',
      apiKeys: 'refused',
      method: 'GET',
      path: '/api/v1/users/:id/sessions',
      access: 'admin',
      summary: "A user's live sessions",
      schema: { params: IdParams, response: { 200: SessionList } },
      handler: (req) => userSessionList(ctx, req.params.id, requireAuth(req)),
    }),
    endpoint({
      group: 'users',
      label: 'session_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/users/:id/sessions/:session_id',
      access: 'admin',
      summary: "End one of a user's sessions",
      schema: { params: UserSessionParams, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) =>
        revokeUserSession(ctx, requireAuth(req), req.params.id, req.params.session_id, clientInfo(req)),
    }),
  ];
}
