import type { AppContext } from '../../context.ts';
import { requireAuth } from '../../security/guard.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
import { toPublicUser } from '../users/users.schemas.ts';
import { JwksResponse, VerifyTokenResponse } from './auth.schemas.ts';

/** The auth module (API.md §5): token verification and the public keys. */
export function authEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'verify_token',
      method: 'GET',
      path: '/api/v1/verify-token',
      access: 'authenticated',
      summary: 'Verify an access token and return its user, session and claims',
      schema: { response: { 200: VerifyTokenResponse } },
      handler: (req) => {
        const { claims, user, session } = requireAuth(req);
        return {
          valid: true as const,
          user: toPublicUser(user),
          session_id: session.id,
          expires_at: new Date(claims.exp * 1000).toISOString(),
          claims,
        };
      },
    }),
    endpoint({
      group: 'auth',
      label: 'jwks',
      method: 'GET',
      path: '/.well-known/jwks.json',
      access: 'public',
      hidden: true,
      summary: 'Public keys that verify Gatehouse access tokens',
      schema: { response: { 200: JwksResponse } },
      handler: (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return ctx.keys.jwks();
      },
    }),
  ];
}
