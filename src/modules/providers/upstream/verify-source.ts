import type { AppContext } from '../../../kernel/context.types.ts';
import type { VerifiedIdentity } from './id-token.ts';
import type { MappingPolicy } from './identity-mapping.ts';
import type { OidcClient } from './oidc-client.ts';
import { notFound, requireProvider } from './providers.service.ts';
import {
  assertAllowedDomain,
  completeClaims,
  refineIdentity,
  type Upstreams,
  verifierFor,
} from './upstream.ts';

/**
 * Where an ID token comes from: the seed's provider (`default`, OIDC_ISSUER) or a named provider of
 * the `providers` module (docs/api.md §18, `"provider"` in the body), its verifier and its own settings.
 */
export interface IdTokenSource {
  client: OidcClient;
  policy: MappingPolicy;
  /**
   * The provider's userinfo, read (openid-client, its `sub` checked against the ID token's) when the
   * ID token lacks a claim the mapping needs and the caller sent the access token (OIDC Core 5.4).
   */
  completeClaims(identity: VerifiedIdentity, accessToken: string): Promise<VerifiedIdentity>;
  /** The provider's own reading of its claims (e.g. Microsoft's `xms_edov`), and its `allowed_domains`. */
  refine(identity: VerifiedIdentity, idToken: string): void;
}

/**
 * A provider as `POST /idp/verify` uses it: `default` (OIDC_ISSUER, docs/api.md §7) or a stored one
 * (docs/api.md §18, `"provider"`): the same ID token checks (its issuer and client id), its own linking
 * settings, its userinfo when the token lacks a claim, its claims read as the redirect flow reads
 * them, and its `allowed_domains`. A disabled or unknown provider: 404 `provider_not_found`.
 */
export async function verifySource(
  ctx: AppContext,
  upstreams: Upstreams,
  name: string,
): Promise<IdTokenSource> {
  const provider = await requireProvider(ctx, name);
  if (!provider.enabled) throw notFound(name);
  return {
    client: verifierFor(ctx, upstreams, provider),
    policy: {
      linkByEmail: provider.linkByEmail,
      linkAdmins: provider.linkAdmins,
      autoProvision: provider.autoProvision,
    },
    completeClaims: (identity, accessToken) =>
      completeClaims(ctx, upstreams, provider, identity, accessToken),
    refine(identity, idToken) {
      assertAllowedDomain(provider, refineIdentity(provider, identity, idToken));
    },
  };
}
