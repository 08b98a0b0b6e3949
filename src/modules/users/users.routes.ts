import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo, UserSchema } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { requestActor } from '../audit/index.ts';
import { type CursorCodec, loadCursorCodec } from './list/cursors.ts';
import { listUsers, userStats } from './list/users-list.service.ts';
import { searchUsers } from './search/users-search.service.ts';
import { IdParams, ListQuery, SearchQuery, StatsResponse, UpdateBody, UserPage } from './users.schemas.ts';
import { getUser, updateUser } from './users.service.ts';

/** The cursor key, read from the database once per app (retried if the first read fails). */
export function cursorCodecFor(ctx: AppContext): () => Promise<CursorCodec> {
  let pending: Promise<CursorCodec> | undefined;
  return () => {
    pending ??= loadCursorCodec(ctx.db).catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}

/** The users module (docs/api.md §6): list, search, stats, get, update; `codec` is its state (`start`). */
export function usersEndpoints(
  ctx: AppContext,
  _modules: ModuleDirectory,
  codec: () => Promise<CursorCodec>,
): Endpoint[] {
  return [
    endpoint({
      group: 'users',
      label: 'list',
      method: 'GET',
      path: '/api/v1/users',
      access: 'admin',
      summary: 'List users: keyset pages with filters and sorts, and the total for the filters',
      schema: { querystring: ListQuery, response: { 200: UserPage } },
      handler: async (req) => listUsers(ctx, await codec(), req.query),
    }),
    // Static paths win over /users/:id in Fastify's router, whatever the declaration order.
    endpoint({
      group: 'users',
      label: 'search',
      method: 'GET',
      path: '/api/v1/users/search',
      access: 'admin',
      summary: 'Search users by a substring of email or name, most relevant first',
      schema: { querystring: SearchQuery, response: { 200: UserPage } },
      handler: async (req) => searchUsers(ctx, await codec(), req.query),
    }),
    endpoint({
      group: 'users',
      label: 'stats',
      method: 'GET',
      path: '/api/v1/users/stats',
      access: 'admin',
      summary: 'User counts by role and status, sign-ups and active users over 24 h, 7 and 30 days',
      schema: { response: { 200: StatsResponse } },
      handler: () => userStats(ctx),
    }),
    endpoint({
      group: 'users',
      label: 'get',
      method: 'GET',
      path: '/api/v1/users/:id',
      access: 'authenticated',
      summary: 'Read a user (admins: anyone; users: themselves)',
      schema: { params: IdParams, response: { 200: UserSchema } },
      handler: (req) => getUser(ctx, requireAuth(req).user, req.params.id),
    }),
    endpoint({
      group: 'users',
      label: 'update',
      method: 'PUT',
      path: '/api/v1/users/:id',
      access: 'authenticated',
      summary: 'Change a user (admins: any field; users: their own name)',
      schema: { params: IdParams, body: UpdateBody, response: { 200: UserSchema } },
      handler: (req) => {
        const auth = requireAuth(req);
        // docs/api.md §22: keys never change credentials (the rest of an update they may make).
        if (auth.apiKey !== null && req.body.password !== undefined) {
          throw new ApiError('forbidden', { detail: 'API keys cannot set passwords' });
        }
        return updateUser(ctx, auth.user, req.params.id, req.body, {
          actor: requestActor(req),
          client: clientInfo(req),
        });
      },
    }),
  ];
}
