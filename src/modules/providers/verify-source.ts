import type { AppContext } from '../../kernel/context.types.ts';
import type { IdTokenSource } from '../idp/index.ts';
import { assertAllowedDomain } from './link.service.ts';
import { notFound, requireProvider } from './providers.service.ts';
import { refineIdentity, verifierFor } from './upstream.ts';

/**
 * A stored provider as `POST /idp/verify` uses it (docs/api.md §18, `"provider"`): the same ID token
 * checks (its issuer and client id), its own linking settings, its claims read as the redirect flow
 * reads them, and its `allowed_domains`. A disabled or unknown provider: 404 `provider_not_found`.
 */
export async function verifySource(ctx: AppContext, name: string): Promise<IdTokenSource> {
  const provider = await requireProvider(ctx, name);
  if (!provider.enabled) throw notFound(name);
  return {
    client: verifierFor(ctx, provider),
    policy: {
      linkByEmail: provider.linkByEmail,
      linkAdmins: provider.linkAdmins,
      autoProvision: provider.autoProvision,
    },
    refine(identity, idToken) {
      assertAllowedDomain(provider, refineIdentity(provider, identity, idToken));
    },
  };
}
