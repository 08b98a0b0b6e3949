import type { AppContext } from '../../../kernel/context.types.ts';
import { startSamlFlow } from '../saml/saml-flow.service.ts';
import { notFound, requireProvider } from '../upstream/providers.service.ts';
import type { Upstreams } from '../upstream/upstream.ts';
import { type FlowPurpose, type Started, startFlow } from './flow.service.ts';

/**
 * `idp.start` and `idp.link` for any provider: a SAML connection (docs/api.md §23) starts with an
 * AuthnRequest, every other kind with the OpenID Connect / OAuth redirect of §18.
 */
export async function startAnyFlow(
  ctx: AppContext,
  upstreams: Upstreams,
  name: string,
  returnTo: string,
  purpose: FlowPurpose,
  binding: { userId: string; sessionId: string } | null = null,
): Promise<Started> {
  const provider = await requireProvider(ctx, name);
  if (provider.kind !== 'saml') return startFlow(ctx, upstreams, name, returnTo, purpose, binding);
  // A SAML connection belongs to the sso module: while that is off, it does not exist.
  if (!provider.enabled || !ctx.modules.isEnabled('sso')) throw notFound(name);
  return startSamlFlow(ctx, provider, returnTo, purpose, binding);
}
