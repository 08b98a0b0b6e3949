import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { requestActor } from '../audit/index.ts';
import { IdParams, unlockUserById } from '../users/index.ts';

/** A bodiless POST: no body, or `{}` (docs/api.md §11), and nothing else. */
const UnlockBody = Type.Union([Type.Object({}, { additionalProperties: false }), Type.Null()]);

/**
 * `POST /api/v1/users/<id>/unlock` (admin): clears a locked-out account's failed-login counts.
 * Declared in the `recovery` module (unlocking is part of getting back in), so forms A and B do not list it.
 */
export function unlockEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'users',
      label: 'unlock',
      method: 'POST',
      path: '/api/v1/users/:id/unlock',
      access: 'admin',
      summary: "Clear a user's failed-login counts so they can sign in again at once",
      schema: { params: IdParams, body: UnlockBody, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await unlockUserById(ctx.db, req.params.id, { actor: requestActor(req), client: clientInfo(req) });
      },
    }),
  ];
}
