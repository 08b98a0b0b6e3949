import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { TokenResponse } from '../auth/index.ts';
import {
  EmailSignInAccepted,
  EmailSignInRequestBody,
  EmailSignInVerifyBody,
} from './passwordless.schemas.ts';
import { requestEmailSignIn } from './request.service.ts';
import { verifyEmailSignIn } from './verify.service.ts';

/** The passwordless module (docs/api.md §20): sign-in by an e-mailed link or code. */
export function passwordlessEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'login_email',
      method: 'POST',
      path: '/api/v1/login/email',
      access: 'public',
      summary: 'Mail a sign-in link and code (always 202 for a well-formed address)',
      schema: { body: EmailSignInRequestBody, response: { 202: EmailSignInAccepted } },
      status: 202,
      handler: (req) => requestEmailSignIn(ctx, req.body.email, clientInfo(req)),
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
