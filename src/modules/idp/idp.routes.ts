import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { ApiError } from '../../platform/api-error.ts';
import { ConfigResponse, VerifyBody, VerifyResponse } from './idp.schemas.ts';
import { type IdTokenSource, idpConfig, signInWithIdToken } from './idp.service.ts';
import type { IdpState } from './oidc-client.ts';
import { idTokenSource } from './sources.ts';

/** idp.config and idp.verify (docs/api.md §7): sign-in through an external OpenID Connect provider. */
export function idpEndpoints(ctx: AppContext, _modules: ModuleDirectory, { seed }: IdpState): Endpoint[] {
  return [
    endpoint({
      group: 'idp',
      label: 'config',
      method: 'GET',
      path: '/api/v1/idp/config',
      access: 'public',
      summary: "The identity provider's endpoints a front end needs to start a sign-in",
      schema: { response: { 200: ConfigResponse } },
      handler: () => idpConfig(seed),
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
        let source: IdTokenSource | null = null;
        if (provider !== undefined) {
          // Forms A and B: the body is exactly section 7's; `provider` exists only with `providers` on.
          if (!ctx.modules.isEnabled('providers')) {
            throw new ApiError('validation_failed', {
              detail: 'body must NOT have additional properties (provider)',
              errors: [{ path: '/provider', message: 'must NOT have additional properties' }],
            });
          }
          if (provider !== 'default') {
            const found = idTokenSource(ctx, provider);
            if (found === null)
              throw new ApiError('provider_not_found', { detail: 'There is no such provider' });
            source = await found;
          }
        }
        return signInWithIdToken(
          ctx,
          seed,
          { idToken: req.body.id_token, nonce: req.body.nonce },
          clientInfo(req),
          source,
        );
      },
    }),
  ];
}
