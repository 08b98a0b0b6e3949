import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo, TokenResponse, toPublicUser } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { JwksResponse, LoginBody, LogoutBody, RefreshBody, VerifyTokenResponse } from './auth.schemas.ts';
import { login, logout } from './auth.service.ts';
import { discoveryEndpoints } from './discovery.routes.ts';
import { refresh } from './refresh.service.ts';

/** The auth module (docs/api.md §5): login, logout, refresh, token verification and the public keys. */
export function authEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'login',
      method: 'POST',
      path: '/api/v1/login',
      access: 'public',
      issuesTokens: true,
      summary: 'Log in with email and password; returns an access and a refresh token',
      schema: { body: LoginBody, response: { 200: TokenResponse } },
      handler: (req) => login(ctx, req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'logout',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/logout',
      access: 'authenticated',
      enrollment: true,
      summary: 'End this session, or every session of the user with {"scope":"global"}',
      schema: { body: LogoutBody, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await logout(ctx, requireAuth(req), req.body?.scope ?? 'local', clientInfo(req));
      },
    }),
    endpoint({
      group: 'auth',
      label: 'refresh_token',
      method: 'POST',
      path: '/api/v1/refresh-token',
      access: 'public',
      issuesTokens: true,
      summary: 'Exchange a refresh token for a new token pair (single use, rotated)',
      schema: { body: RefreshBody, response: { 200: TokenResponse } },
      handler: (req) => refresh(ctx, req.body.refresh_token, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'verify_token',
      // docs/api.md §22: a key is not an access token; it answers 401 token_invalid here.
      apiKeys: 'unrecognized',
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
      cacheControl: 'public, max-age=300',
      // Browser apps verify ID tokens with it (docs/api.md §17), without CORS_ORIGINS.
      anyOrigin: true,
      handler: () => ctx.keys.jwks(),
    }),
    ...discoveryEndpoints(ctx, modules),
  ];
}
