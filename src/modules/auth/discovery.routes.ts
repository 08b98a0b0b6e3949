import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
import { passToAuthorizationServer } from '../oauth/index.ts';

const Metadata = Type.Object({}, { additionalProperties: true });

// Discovery changes only when a key of a new algorithm appears; verifiers refetch it rarely anyway.
const CACHE = 'public, max-age=300';

/**
 * RFC 8414 authorization server metadata and OpenID discovery (docs/api.md §14), so a resource server
 * set up with the issuer URL alone finds the JWKS. Honest about what Gatehouse is: it issues
 * tokens through its own JSON API, not OAuth endpoints, so no authorization or token endpoint is
 * advertised and `response_types_supported` is empty. Hidden from the index like the JWKS.
 */
export function discoveryEndpoints(ctx: AppContext): Endpoint[] {
  const issuer = ctx.config.publicUrl;
  const base = () => ({
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: [] as string[],
  });
  return [
    endpoint({
      group: 'auth',
      label: 'authorization_server_metadata',
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      access: 'public',
      hidden: true,
      summary: 'RFC 8414 metadata: the issuer of Gatehouse access tokens and its JWKS',
      schema: { response: { 200: Metadata } },
      handler: (req, reply) => {
        // While `oauth` is on, the authorization server describes itself (docs/api.md §17).
        if (ctx.modules.isEnabled('oauth')) return passToAuthorizationServer(ctx, req, reply);
        reply.header('cache-control', CACHE);
        return base();
      },
    }),
    endpoint({
      group: 'auth',
      label: 'openid_configuration',
      method: 'GET',
      path: '/.well-known/openid-configuration',
      access: 'public',
      hidden: true,
      summary: 'OpenID discovery document: the issuer, its JWKS and the signing algorithms in it',
      schema: { response: { 200: Metadata } },
      handler: (req, reply) => {
        if (ctx.modules.isEnabled('oauth')) return passToAuthorizationServer(ctx, req, reply);
        reply.header('cache-control', CACHE);
        return {
          ...base(),
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ctx.keys.algorithms(),
        };
      },
    }),
  ];
}
