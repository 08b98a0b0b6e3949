import type { AppContext } from '../../kernel/context.types.ts';
import type { IdTokenSource } from './idp.service.ts';

/**
 * `POST /idp/verify` with `"provider"` (docs/api.md §18): the `providers` module hands the idp module
 * a way to find a named provider's verifier and settings, so idp never imports providers (which
 * imports idp).
 */
type Resolver = (name: string) => Promise<IdTokenSource>;

const resolvers = new WeakMap<AppContext, Resolver>();

/** Called by the providers module as its endpoints are declared. */
export function provideIdTokenSources(ctx: AppContext, resolve: Resolver): void {
  resolvers.set(ctx, resolve);
}

/** The named provider's source, or null when no module provides sources. */
export function idTokenSource(ctx: AppContext, name: string): Promise<IdTokenSource> | null {
  return resolvers.get(ctx)?.(name) ?? null;
}
