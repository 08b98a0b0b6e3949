import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';

const Metadata = Type.Object({}, { additionalProperties: true });

// Discovery changes only when a key of a new algorithm appears; verifiers refetch it rarely anyway.
// The same for every request, whichever module answers: every URL in it is PUBLIC_URL's, whatever
// `Host` or `X-Forwarded-Host` says (the oauth module pins what its library sees), so a shared cache
// cannot hand one requester's document to another; the library's CORS answer adds `Vary: Origin`.
const CACHE = 'public, max-age=300';

/**
 * RFC 8414 authorization server metadata and OpenID discovery (docs/api.md §14), so a resource server
 * set up with the issuer URL alone finds the JWKS. Honest about what Gatehouse is: it issues
 * tokens through its own JSON API, not OAuth endpoints, so no authorization or token endpoint is
 * advertised and `response_types_supported` is empty. Hidden from the index like the JWKS.
 */
export function discoveryEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  // The oauth module's one authorization server (its offer), never a second instance.
  const oauth = modules.offer('oauth');
  const issuer = ctx.config.publicUrl;
  const base = () => ({
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: [] as string[],
  });
  // Gatehouse's own document, or oidc-provider's while `oauth` is on.
  const metadata = async (
    req: FastifyRequest,
    reply: FastifyReply,
    document: () => Record<string, unknown>,
  ): Promise<FastifyReply> => {
    reply.header('cache-control', CACHE);
    if (ctx.modules.isEnabled('oauth')) {
      await oauth.pass(req, reply);
      return reply;
    }
    // Any origin may read it, as the library's answers any (docs/api.md §17).
    return reply.header('access-control-allow-origin', '*').send(document());
  };
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
      // While `oauth` is on, the authorization server describes itself (docs/api.md §17): it writes the reply.
      ownsReply: true,
      handler: (req, reply) => metadata(req, reply, base),
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
      ownsReply: true,
      handler: (req, reply) =>
        metadata(req, reply, () => ({
          ...base(),
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ctx.keys.algorithms(),
        })),
    }),
  ];
}
