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
