/**
 * The module names, one key per module. Empty here: each `<module>/<module>.module.ts` adds its own
 * name by declaration merging (the way Fastify types its decorators), so this leaf names no module
 * and imports nothing, and the module list (registry.ts) stays the one list without an import cycle:
 *
 *   declare module '../../kernel/module-names.ts' {
 *     interface ModuleNames { mfa: true }
 *   }
 *
 * `defineModule` accepts only a declared name, and registry.ts fails to compile while a declared
 * name is not listed in `MODULES`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each module's declaration
export interface ModuleNames {}

/** A module's name (`ctx.modules.isEnabled('mfa')`). */
export type ModuleName = keyof ModuleNames & string;

/**
 * What a module offers the other modules from its state, by name: empty here, each module that offers
 * something declares it beside its name (declaration merging, as above), e.g. `oauth` hands requests
 * to its one authorization server. Another module reaches it through its `ModuleDirectory`
 * (`modules.offer('oauth')`), never by keying a map with the context.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each module's declaration
export interface ModuleOffers {}

/** What the module of that name offers (declared in `ModuleOffers`), or nothing. */
export type OfferOf<N extends ModuleName> = N extends keyof ModuleOffers ? ModuleOffers[N] : undefined;
