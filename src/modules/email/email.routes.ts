import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { bearerToken, createAuthenticator, requireAuth } from '../../http/guard.ts';
import { clientInfo, enrollmentRequired } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import {
  ChangeBody,
  EmailLinkView,
  EmptyBody,
  LinkTokenParams,
  MessageResponse,
  UserEnvelope,
  VerificationBody,
} from './email.schemas.ts';
import {
  requestEmailChange,
  requestVerification,
  requestVerificationWithPassword,
  useEmailLink,
  viewEmailLink,
} from './email.service.ts';

const CHALLENGE = 'Bearer realm="gatehouse"';

/** The email module (docs/api.md §12): ask for a verification link, open and use a link, change the address. */
export function emailEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'email_verification',
      method: 'POST',
      path: '/api/v1/email/verification',
      // Public in the guard's sense: with REQUIRE_VERIFIED_EMAIL an unverified person, who cannot
      // sign in, asks with email and password instead of a token. The handler authenticates.
      access: 'public',
      summary: 'Mail the caller a link that confirms their address',
      schema: { body: VerificationBody, response: { 202: MessageResponse } },
      status: 202,
      cacheControl: 'no-store',
      handler: async (req) => {
        const client = clientInfo(req);
        const body = req.body && 'email' in req.body ? req.body : null;
        const token = bearerToken(req);
        let result: MessageResponse;
        if (token !== null) {
          if (body) throw new ApiError('validation_failed', { detail: 'With a token, send no body' });
          const auth = await createAuthenticator(
            ctx.accessTokens,
            ctx.sessions,
            ctx.config.requireMfa,
          )(token).catch((err: unknown) => {
            if (err instanceof ApiError && err.status === 401) {
              err.headers['www-authenticate'] = `${CHALLENGE}, error="invalid_token"`;
            }
            throw err;
          });
          // REQUIRE_MFA: an enrolment-only session only enrols (docs/mfa.md), as the guard rules.
          if (auth.enrollmentOnly) throw enrollmentRequired();
          result = await requestVerification(ctx, auth.user, client);
        } else if (body && ctx.config.requireVerifiedEmail) {
          result = await requestVerificationWithPassword(ctx, body, client);
        } else {
          throw new ApiError('unauthenticated', {
            detail: ctx.config.requireVerifiedEmail
              ? 'Send a Bearer token, or {"email","password"}'
              : 'A Bearer access token is required',
            headers: { 'www-authenticate': CHALLENGE },
          });
        }
        return result;
      },
    }),
    endpoint({
      group: 'auth',
      label: 'email_verify_open',
      method: 'GET',
      path: '/api/v1/email/verify/:token',
      access: 'public',
      summary: 'Show a verification or change link (reads only: opening never uses it up)',
      schema: { params: LinkTokenParams, response: { 200: EmailLinkView } },
      cacheControl: 'no-store',
      handler: (req) => viewEmailLink(ctx, req.params.token, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'email_verify',
      method: 'POST',
      path: '/api/v1/email/verify/:token',
      access: 'public',
      summary: 'Use a verification or change link: the address is proven (and switched, for a change)',
      schema: { params: LinkTokenParams, body: EmptyBody, response: { 200: UserEnvelope } },
      cacheControl: 'no-store',
      handler: (req) => useEmailLink(ctx, req.params.token, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'email_change',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/email/change',
      access: 'authenticated',
      summary: 'Ask to change the address: a link to the new one, a notice to the current one',
      schema: { body: ChangeBody, response: { 202: MessageResponse } },
      status: 202,
      handler: (req) => requestEmailChange(ctx, requireAuth(req).user, req.body, clientInfo(req)),
    }),
  ];
}
