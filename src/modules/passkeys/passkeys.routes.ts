import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { createAuthenticator, optionalCaller, requireAuth } from '../../http/guard.ts';
import { CurrentPasswordBody, clientInfo, FreshProofBody, TokenResponse } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { authenticationOptions } from './authentication-options.ts';
import {
  AuthenticationOptionsBody,
  CeremonyOptions,
  CreatedPasskey,
  CreatePasskeyBody,
  PasskeyIdParams,
  PasskeyList,
  PasskeyProof,
} from './passkeys.schemas.ts';
import {
  createPasskey,
  loginWithPasskey,
  passkeyList,
  registrationOptions,
  removePasskey,
} from './passkeys.service.ts';

/** The passkeys module (docs/api.md §13): registration, discoverable sign-in, list and delete. */
export function passkeyEndpoints(ctx: AppContext): Endpoint[] {
  // The options endpoint is public, but a Bearer caller with an empty body asks for a fresh proof.
  const authenticate = createAuthenticator(ctx.accessTokens, ctx.sessions, ctx.config.requireMfa);
  return [
    endpoint({
      group: 'auth',
      label: 'passkey_options',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/passkeys/authentication/options',
      access: 'public',
      summary:
        'Options for a passkey sign-in (discoverable), for a passkey as second factor with mfa_token or reset_token, or (Bearer, empty body) for a fresh proof',
      schema: { body: AuthenticationOptionsBody, response: { 200: CeremonyOptions } },
      handler: async (req) => {
        const caller = await optionalCaller(req, authenticate);
        return authenticationOptions(ctx, req.body ?? {}, clientInfo(req), caller?.user.id ?? null);
      },
    }),
    endpoint({
      group: 'auth',
      label: 'login_passkey',
      method: 'POST',
      path: '/api/v1/login/passkey',
      access: 'public',
      issuesTokens: true,
      summary: 'Sign in with a user-verifying passkey',
      schema: { body: PasskeyProof, response: { 200: TokenResponse } },
      handler: (req) => loginWithPasskey(ctx, req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'passkeys',
      apiKeys: 'refused',
      method: 'GET',
      path: '/api/v1/passkeys',
      access: 'authenticated',
      enrollment: true,
      summary: "The caller's passkeys",
      schema: { response: { 200: PasskeyList } },
      handler: (req) => passkeyList(ctx, requireAuth(req).user.id),
    }),
    endpoint({
      group: 'auth',
      label: 'passkey_registration_options',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/passkeys/registration/options',
      access: 'authenticated',
      enrollment: true,
      summary: 'Options to register a passkey (current password required)',
      schema: { body: CurrentPasswordBody, response: { 200: CeremonyOptions } },
      handler: (req) =>
        registrationOptions(ctx, requireAuth(req), req.body.current_password, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'passkey_create',
      apiKeys: 'refused',
      method: 'POST',
      path: '/api/v1/passkeys',
      access: 'authenticated',
      enrollment: true,
      summary: 'Register a passkey from the authenticator response',
      schema: { body: CreatePasskeyBody, response: { 201: CreatedPasskey } },
      status: 201,
      location: (created) => `/api/v1/passkeys/${created.id}`,
      handler: (req) => createPasskey(ctx, requireAuth(req), req.body, clientInfo(req)),
    }),
    endpoint({
      group: 'auth',
      label: 'passkey_delete',
      apiKeys: 'refused',
      method: 'DELETE',
      path: '/api/v1/passkeys/:id',
      access: 'authenticated',
      summary:
        'Remove one of your passkeys after a fresh proof: current_password, code (TOTP or recovery code) or passkey',
      schema: { params: PasskeyIdParams, body: FreshProofBody, response: { 204: Type.Null() } },
      status: 204,
      handler: (req) => removePasskey(ctx, requireAuth(req), req.params.id, req.body, clientInfo(req)),
    }),
  ];
}
