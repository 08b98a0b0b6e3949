// The import rules of the house (docs/architecture.md, "The dependency rule"), checked by
// `npm run deps` (scripts/deps.mjs, which hands dependency-cruiser the tree with types erased, as
// .mjs files: hence `(ts|mjs)` below) in CI right after the type check. A feature is a folder under src/modules/, and
// src/pages; the core is src/identity, src/db, src/security, src/links, src/mail and src/config.
const FEATURE = '^src/(modules/[^/]+|pages)/';
const CORE = '^src/(identity|db|security|links|mail|config)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'feature-through-index',
      severity: 'error',
      comment:
        'A feature reaches another feature only through its index.ts, never its *.queries.ts, service or other inner files.',
      from: { path: '^src/(modules/[^/]+|pages)/' },
      to: {
        path: FEATURE,
        pathNot: ['^src/$1/', '^src/(modules/[^/]+|pages)/index\\.(ts|mjs)$'],
      },
    },
    {
      name: 'outside-through-index',
      severity: 'error',
      comment:
        "The CLI commands reach a feature only through its index.ts. (The composition root — src/app.ts, src/context.ts, src/server.ts — and src/modules/registry.ts wire the features together and name their files; registry.ts takes only each module's <module>.module.ts, rule registry-takes-declarations.)",
      from: { path: '^src/cli/' },
      to: { path: FEATURE, pathNot: '^src/(modules/[^/]+|pages)/index\\.(ts|mjs)$' },
    },
    {
      name: 'identity-through-index',
      severity: 'error',
      comment: 'A feature reaches the identity core only through src/identity/index.ts.',
      from: { path: FEATURE },
      to: { path: '^src/identity/', pathNot: '^src/identity/index\\.(ts|mjs)$' },
    },
    {
      name: 'core-imports-no-feature',
      severity: 'error',
      comment:
        'The core (identity, db, security, links, mail, config) sits below the features and never imports one.',
      from: { path: CORE },
      to: { path: FEATURE },
    },
    {
      name: 'kernel-imports-no-feature',
      severity: 'error',
      comment:
        'The kernel files in src/modules/ (endpoint, module state) import no feature; only registry.ts lists them.',
      from: { path: '^src/modules/[^/]+\\.(ts|mjs)$', pathNot: '^src/modules/registry\\.(ts|mjs)$' },
      to: { path: FEATURE },
    },
    {
      name: 'registry-takes-declarations',
      severity: 'error',
      comment:
        'src/modules/registry.ts takes each module from its declaration, src/modules/<module>/<module>.module.ts, and nothing else of a feature.',
      from: { path: '^src/modules/registry\\.(ts|mjs)$' },
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
