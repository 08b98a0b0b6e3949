import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { idpConfig, signInWithIdToken, type Upstreams } from '../providers/index.ts';
import { ConfigResponse, VerifyBody, VerifyResponse } from './idp.schemas.ts';

/** idp.config and idp.verify (docs/api.md §7): sign-in through an external OpenID Connect provider. */
export function idpEndpoints(ctx: AppContext, _modules: ModuleDirectory, upstreams: Upstreams): Endpoint[] {
  return [
    endpoint({
      group: 'idp',
      label: 'config',
      method: 'GET',
      path: '/api/v1/idp/config',
      access: 'public',
      summary: "The identity provider's endpoints a front end needs to start a sign-in",
      schema: { response: { 200: ConfigResponse } },
      handler: () => idpConfig(ctx, upstreams),
    }),
    endpoint({
      group: 'idp',
      label: 'verify',
      method: 'POST',
      path: '/api/v1/idp/verify',
      access: 'public',
      issuesTokens: true,
      summary: "Exchange the provider's ID token for a Gatehouse session",
      schema: { body: VerifyBody, response: { 200: VerifyResponse } },
      handler: async (req) => {
        const { provider } = req.body;
        if (provider !== undefined) {
          // Forms A and B: the body is exactly section 7's; `provider` exists only with `providers` on.
          if (!ctx.modules.isEnabled('providers')) {
            throw new ApiError('validation_failed', {
              detail: 'body must NOT have additional properties (provider)',
              errors: [{ path: '/provider', message: 'must NOT have additional properties' }],
            });
          }
        }
        return signInWithIdToken(
          ctx,
          upstreams,
          { idToken: req.body.id_token, nonce: req.body.nonce, accessToken: req.body.access_token },
          clientInfo(req),
          provider,
        );
      },
    }),
  ];
}
