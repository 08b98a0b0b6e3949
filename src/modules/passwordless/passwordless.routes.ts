import type { AppContext } from '../../context.ts';
import { clientInfo } from '../../identity/index.ts';
import { deleteCountersBefore } from '../../security/throttle.queries.ts';
import { TokenResponse } from '../auth/index.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
import {
  EmailSignInAccepted,
  EmailSignInRequestBody,
  EmailSignInVerifyBody,
} from './passwordless.schemas.ts';
import { requestEmailSignIn } from './request.service.ts';
import { verifyEmailSignIn } from './verify.service.ts';

const PRUNE_INTERVAL_MS = 10 * 60_000;
const HOUR_MS = 3_600_000;

/**
 * Housekeeping: this module's hourly budgets (`signin:` counters, src/links/budgets.ts). Its pairs are
 * one-time links, deleted with the others by the links' own pruning.
 */
function startPruning(ctx: AppContext): void {
  const timer = setInterval(() => {
    deleteCountersBefore(ctx.db, Date.now() - HOUR_MS, 'signin:').catch((err: unknown) =>
      ctx.log.warn({ err }, 'sign-in budget pruning failed'),
    );
  }, PRUNE_INTERVAL_MS);
  timer.unref();
  ctx.closers.push(() => clearInterval(timer));
}

/** The passwordless module (docs/api.md §20): sign-in by an e-mailed link or code. */
export function passwordlessEndpoints(ctx: AppContext): Endpoint[] {
  startPruning(ctx);
  return [
    endpoint({
      group: 'auth',
      label: 'login_email',
      method: 'POST',
      path: '/api/v1/login/email',
      access: 'public',
      summary: 'Mail a sign-in link and code (always 202 for a well-formed address)',
      schema: { body: EmailSignInRequestBody, response: { 202: EmailSignInAccepted } },
      handler: async (req, reply) =>
        reply.status(202).send(await requestEmailSignIn(ctx, req.body.email, clientInfo(req))),
    }),
    endpoint({
      group: 'auth',
      label: 'login_email_verify',
      method: 'POST',
      path: '/api/v1/login/email/verify',
      access: 'public',
      issuesTokens: true,
      summary: 'Sign in with an e-mailed code (and its address) or link token',
      schema: { body: EmailSignInVerifyBody, response: { 200: TokenResponse } },
      handler: (req) => verifyEmailSignIn(ctx, req.body, clientInfo(req)),
    }),
  ];
}
