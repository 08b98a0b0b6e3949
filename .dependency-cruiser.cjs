// The import rules of the house (docs/architecture.md, "The dependency rule"), checked by
// `npm run deps` (scripts/deps.mjs, which hands dependency-cruiser the tree with types erased, as
// .mjs files: hence `(ts|mjs)` below) in CI right after the type check.
// - features: each folder under src/modules/, and the page toolkit src/http/pages/;
// - the core: src/identity/ (users, sessions, audit, events, tokens, budgets, passwords, one-time
//   links) and src/platform/ (config, logger, database, mail), below every feature;
// - the HTTP kernel src/http/ and the composition src/kernel/ (module declarations, the registry,
//   module state, the scheduler, context and server).
const FEATURE = '^src/(modules/[^/]+|http/pages)/';
const CORE = '^src/(identity|platform)/';
const INDEX = '^src/(modules/[^/]+|http/pages)/index\\.(ts|mjs)$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'feature-through-index',
      severity: 'error',
      comment:
        'A feature reaches another feature only through its index.ts, never its *.queries.ts, service or other inner files.',
      from: { path: FEATURE },
      to: {
        path: FEATURE,
        pathNot: ['^src/$1/', INDEX],
      },
    },
    {
      name: 'outside-through-index',
      severity: 'error',
      comment:
        "The CLI commands and the HTTP kernel reach a feature only through its index.ts. (The composition — src/kernel/context.ts, src/kernel/server.ts, src/http/app.ts — wires the features together and names their files; src/kernel/registry.ts takes only each module's <module>.module.ts, rule registry-takes-declarations.)",
      from: { path: ['^src/cli/', '^src/http/[^/]+\\.(ts|mjs)$'], pathNot: '^src/http/app\\.(ts|mjs)$' },
      to: { path: FEATURE, pathNot: INDEX },
    },
    {
      name: 'identity-through-index',
      severity: 'error',
      comment:
        "A feature reaches the identity core's own files (users, sessions, the audit writer, events, the sign-in pipeline) only through src/identity/index.ts; its toolkits (tokens/, budgets/, passwords/, links/) are imported directly.",
      from: { path: FEATURE },
      to: { path: '^src/identity/[^/]+\\.(ts|mjs)$', pathNot: '^src/identity/index\\.(ts|mjs)$' },
    },
    {
      name: 'core-imports-no-feature',
      severity: 'error',
      comment: 'The core (src/identity, src/platform) sits below the features and never imports one.',
      from: { path: CORE },
      to: { path: FEATURE },
    },
    {
      name: 'platform-imports-no-identity',
      severity: 'error',
      comment: 'The platform (config, logger, database, mail) sits below the identity core.',
      from: { path: '^src/platform/' },
      to: { path: '^src/identity/' },
    },
    {
      name: 'kernel-imports-no-feature',
      severity: 'error',
      comment:
        'The kernel files (module declarations, module state, the scheduler) import no feature; only the composition (registry, context, server) names them.',
      from: { path: '^src/kernel/', pathNot: '^src/kernel/(registry|context|server)\\.(ts|mjs)$' },
      to: { path: FEATURE },
    },
    {
      name: 'registry-takes-declarations',
      severity: 'error',
      comment:
        'src/kernel/registry.ts takes each module from its declaration, src/modules/<module>/<module>.module.ts, and nothing else of a feature.',
      from: { path: '^src/kernel/registry\\.(ts|mjs)$' },
      to: { path: FEATURE, pathNot: '^src/modules/([^/]+)/\\1\\.module\\.(ts|mjs)$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycles. A cycle through a type-only import (erased at run time) is allowed: defineModule makes one unavoidable (context → module state → registry → each module → AppContext). scripts/deps.mjs hands every type-only import over as typeOnlyImport(), an exotic require (options below). Every other rule applies to type-only imports as to any other.',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['exotic-require'] } },
    },
  ],
  options: {
    // scripts/deps.mjs writes each type-only import as `typeOnlyImport('<specifier>')`.
    exoticRequireStrings: ['typeOnlyImport'],
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
  },
};
