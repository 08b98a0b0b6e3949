import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { IdParams } from '../users/index.ts';
import {
  EmptyBody,
  ExpiresResponse,
  ForgotBody,
  LinkTokenParams,
  MessageResponse,
  ResetBody,
  ResetView,
  UserEnvelope,
} from './recovery.schemas.ts';
import { forgotPassword, resetPassword, viewResetLink } from './recovery.service.ts';
import { adminSendResetLink } from './reset-link-admin.service.ts';

/** The recovery module (docs/api.md §11): forgot, open and use a reset link; admins mail one. */
export function recoveryEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'password_forgot',
      method: 'POST',
      path: '/api/v1/password/forgot',
      access: 'public',
      summary: 'Ask for a password reset link (always 202, whatever the address)',
      schema: { body: ForgotBody, response: { 202: MessageResponse } },
      status: 202,
      handler: (req) => forgotPassword(ctx, req.body.email, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'password_reset_open',
      method: 'GET',
      path: '/api/v1/password/reset/:token',
      access: 'public',
      summary: 'Show a reset link (reads only: opening a link never uses it up)',
      schema: { params: LinkTokenParams, response: { 200: ResetView } },
      // About a bearer secret: kept out of shared caches and history.
      cacheControl: 'no-store',
      handler: (req) => viewResetLink(ctx, req.params.token, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'password_reset',
      method: 'POST',
      path: '/api/v1/password/reset/:token',
      access: 'public',
      summary: 'Set a new password with a reset link; ends every session of the account',
      schema: { params: LinkTokenParams, body: ResetBody, response: { 200: UserEnvelope } },
      cacheControl: 'no-store',
      handler: (req) => resetPassword(ctx, req.params.token, req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'users',
      label: 'password_reset',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/users/:id/password-reset',
      access: 'admin',
      summary: 'Mail a user a password reset link (the link is not shown to the admin)',
      schema: { params: IdParams, body: EmptyBody, response: { 202: ExpiresResponse } },
      status: 202,
      handler: (req) => adminSendResetLink(ctx, requireAuth(req).user, req.params.id, clientInfo(req)),
    }),
  ];
}
