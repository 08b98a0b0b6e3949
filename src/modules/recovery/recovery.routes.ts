import type { AppContext } from '../../context.ts';
import { clientInfo } from '../../identity/index.ts';
import { deleteLinksExpiredBefore } from '../../links/one-time-links.queries.ts';
import { requireAuth } from '../../security/guard.ts';
import { deleteCountersBefore } from '../../security/throttle.queries.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
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

const PRUNE_INTERVAL_MS = 10 * 60_000;
const HOUR_MS = 3_600_000;
// The hourly budgets of src/links/budgets.ts; login's own counters are pruned by the auth module.
const BUDGET_PREFIXES = ['mail:', 'forgot:', 'signup:', 'verify:', 'link:'];
// Used and dead links are kept a week past their expiry, for investigations; then deleted.
const LINK_KEEP_MS = 7 * 24 * HOUR_MS;

/** Housekeeping of the mailed-link flows: spent hourly budgets and long-expired links. */
function startPruning(ctx: AppContext): void {
  const prune = async () => {
    const now = Date.now();
    for (const prefix of BUDGET_PREFIXES) await deleteCountersBefore(ctx.db, now - HOUR_MS, prefix);
    await deleteLinksExpiredBefore(ctx.db, now - LINK_KEEP_MS);
  };
  const timer = setInterval(() => {
    prune().catch((err: unknown) => ctx.log.warn({ err }, 'link and budget pruning failed'));
  }, PRUNE_INTERVAL_MS);
  timer.unref();
  ctx.closers.push(() => clearInterval(timer));
}

/** The recovery module (docs/api.md §11): forgot, open and use a reset link; admins mail one. */
export function recoveryEndpoints(ctx: AppContext): Endpoint[] {
  startPruning(ctx);
  return [
    endpoint({
      group: 'auth',
      label: 'password_forgot',
      method: 'POST',
      path: '/api/v1/password/forgot',
      access: 'public',
      summary: 'Ask for a password reset link (always 202, whatever the address)',
      schema: { body: ForgotBody, response: { 202: MessageResponse } },
      handler: async (req, reply) =>
        reply.status(202).send(await forgotPassword(ctx, req.body.email, clientInfo(req))),
    }),
    endpoint({
      group: 'auth',
      label: 'password_reset_open',
      method: 'GET',
      path: '/api/v1/password/reset/:token',
      access: 'public',
      summary: 'Show a reset link (reads only: opening a link never uses it up)',
      schema: { params: LinkTokenParams, response: { 200: ResetView } },
      handler: async (req, reply) => {
        // About a bearer secret: kept out of shared caches and history.
        reply.header('cache-control', 'no-store');
        return viewResetLink(ctx, req.params.token, clientInfo(req));
      },
    }),
    endpoint({
      group: 'auth',
      label: 'password_reset',
      method: 'POST',
      path: '/api/v1/password/reset/:token',
      access: 'public',
      summary: 'Set a new password with a reset link; ends every session of the account',
      schema: { params: LinkTokenParams, body: ResetBody, response: { 200: UserEnvelope } },
      handler: async (req, reply) => {
        reply.header('cache-control', 'no-store');
        return resetPassword(ctx, req.params.token, req.body, clientInfo(req));
      },
    }),
    endpoint({
      group: 'users',
      label: 'password_reset',
      method: 'POST',
      path: '/api/v1/users/:id/password-reset',
      access: 'admin',
      summary: 'Mail a user a password reset link (the link is not shown to the admin)',
      schema: { params: IdParams, body: EmptyBody, response: { 202: ExpiresResponse } },
      handler: async (req, reply) =>
        reply
          .status(202)
          .send(await adminSendResetLink(ctx, requireAuth(req).user, req.params.id, clientInfo(req))),
    }),
  ];
}
