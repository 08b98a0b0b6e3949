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
        'The CLI commands reach a feature only through its index.ts. (The composition root — src/app.ts, src/context.ts, src/server.ts — and src/modules/registry.ts wire the features together and still name their files; they take each module from its index.ts once modules declare themselves there.)',
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
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
  },
};
