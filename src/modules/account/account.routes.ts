import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo, TokenResponse } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ChangePasswordBody, ProfileResponse } from './account.schemas.ts';
import { changePassword, profile } from './account.service.ts';

/** The account module (docs/api.md §5, index group `auth`): self-service password change and profile. */
export function accountEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'change_password',
      apiKeys: 'refused',
      method: 'PUT',
      path: '/api/v1/change-password',
      access: 'authenticated',
      summary: 'Change your password; ends every session and returns tokens for a fresh one',
      schema: { body: ChangePasswordBody, response: { 200: TokenResponse } },
      handler: (req) => changePassword(ctx, requireAuth(req), req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'profile',
      method: 'GET',
      path: '/api/v1/profile',
      access: 'authenticated',
      enrollment: true,
      summary: 'Your user object with linked identities and live sessions',
      schema: { response: { 200: ProfileResponse } },
      handler: (req) => profile(ctx, requireAuth(req)),
    }),
  ];
}
