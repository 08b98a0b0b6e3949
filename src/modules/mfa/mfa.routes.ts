import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import {
  CurrentPasswordBody,
  clientInfo,
  FreshProofBody,
  passkeyFactor,
  TokenResponse,
} from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { IdParams } from '../users/index.ts';
import {
  CodeBody,
  LoginMfaBody,
  MaybeRecoveryCodes,
  MfaStatus,
  RecoveryCodes,
  TotpEnrollment,
} from './mfa.schemas.ts';
import {
  confirmTotpEnrollment,
  enrollTotp,
  mfaStatus,
  newRecoveryCodeSet,
  removeTotp,
  resetUserMfa,
} from './mfa.service.ts';
import { completeMfaLogin } from './mfa-login.service.ts';

/** The mfa module (docs/api.md §13): TOTP, recovery codes, the second step of sign-in, the admin reset. */
export function mfaEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'login_mfa',
      method: 'POST',
      path: '/api/v1/login/mfa',
      access: 'public',
      issuesTokens: true,
      summary: 'Complete a sign-in with a second factor (TOTP, recovery code or passkey) and the mfa_token',
      schema: { body: LoginMfaBody, response: { 200: TokenResponse } },
      handler: (req) => {
        const body = req.body;
        const factor =
          'code' in body
            ? { kind: 'code' as const, code: body.code }
            : { kind: 'passkey' as const, verify: passkeyFactor(ctx, body.passkey, 'mfa') };
        return completeMfaLogin(ctx, body.mfa_token, factor, clientInfo(req));
      },
    }),
    endpoint({
      group: 'auth',
      label: 'mfa',
      method: 'GET',
      path: '/api/v1/mfa',
      access: 'authenticated',
      enrollment: true,
      summary: "The caller's second factors",
      schema: { response: { 200: MfaStatus } },
      handler: (req) => mfaStatus(ctx, requireAuth(req).user),
    }),
    endpoint({
      group: 'auth',
      label: 'mfa_totp_enroll',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/mfa/totp',
      access: 'authenticated',
      enrollment: true,
      summary: 'Start TOTP enrolment (current password required); pending for 10 minutes',
      schema: { body: CurrentPasswordBody, response: { 200: TotpEnrollment } },
      handler: (req) => enrollTotp(ctx, requireAuth(req), req.body.current_password, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'mfa_totp_confirm',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/mfa/totp/confirm',
      access: 'authenticated',
      enrollment: true,
      summary: 'Confirm TOTP with a code; returns recovery codes once and signs out other sessions',
      schema: { body: CodeBody, response: { 200: MaybeRecoveryCodes } },
      handler: (req) => confirmTotpEnrollment(ctx, requireAuth(req), req.body.code, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'mfa_totp_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/mfa/totp',
      access: 'authenticated',
      summary: 'Remove TOTP after a fresh proof: current_password, code (TOTP or recovery code) or passkey',
      schema: { body: FreshProofBody, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) => removeTotp(ctx, requireAuth(req), req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'mfa_recovery_codes',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/mfa/recovery-codes',
      access: 'authenticated',
      summary:
        'Replace the recovery codes after a fresh proof: current_password, code (TOTP or recovery code) or passkey',
      schema: { body: FreshProofBody, response: { 200: RecoveryCodes } },
      handler: (req) => newRecoveryCodeSet(ctx, requireAuth(req), req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'users',
      label: 'mfa_reset',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/users/:id/mfa',
      access: 'admin',
      summary: "Remove every second factor of a user and end the user's sessions",
      schema: { params: IdParams, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) => resetUserMfa(ctx, requireAuth(req), req.params.id, clientInfo(req)),
    }),
  ];
}
