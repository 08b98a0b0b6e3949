import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import {
  InvitationView,
  InviteBody,
  InviteResponse,
  SetPasswordBody,
  TokenParams,
  TokenResponse,
} from './invitations.schemas.ts';
import { acceptInvitation, inviteUser, viewInvitation } from './invitations.service.ts';

/** The invitations module (docs/api.md §6): auth.invite, auth.invite_set_password, users.invite. */
export function invitationEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'invite',
      method: 'GET',
      path: '/api/v1/invite/:token',
      access: 'public',
      summary: 'Show an invitation (reads only: opening a link never uses it up)',
      schema: { params: TokenParams, response: { 200: InvitationView } },
      // The answer is about a bearer secret: keep it out of shared caches and history.
      cacheControl: 'no-store',
      handler: (req) => viewInvitation(ctx, req.params.token),
    }),
    endpoint({
      group: 'auth',
      label: 'invite_set_password',
      method: 'POST',
      path: '/api/v1/invite/:token/set-password',
      access: 'public',
      summary: 'Accept an invitation: set the password, activate the account, sign in',
      schema: { params: TokenParams, body: SetPasswordBody, response: { 200: TokenResponse } },
      cacheControl: 'no-store',
      handler: (req) => acceptInvitation(ctx, req.params.token, req.body.password, clientInfo(req)),
    }),
    endpoint({
      group: 'users',
      label: 'invite',
      method: 'POST',
      path: '/api/v1/users/invite',
      access: 'admin',
      summary: 'Invite someone by e-mail (replaces a pending invitation of the same address)',
      schema: { body: InviteBody, response: { 201: InviteResponse } },
      status: 201,
      handler: (req) => inviteUser(ctx, requireAuth(req).user, req.body, clientInfo(req)),
    }),
  ];
}
