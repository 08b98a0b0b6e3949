// The import rules of the house (docs/architecture.md, "The dependency rule"), checked by
// `npm run deps` (scripts/deps.mjs, which hands dependency-cruiser the tree with types erased, as
// .mjs files: hence `(ts|mjs)` below) in CI right after the type check.
// - features: each folder under src/modules/, and the page toolkit src/http/pages/;
// - the core: src/identity/ (users, sessions, audit, events, tokens, budgets, passwords, one-time
//   links), below every feature and off the HTTP kernel, and under it src/platform/ (config, logger,
//   database, mail, ApiError), which imports nothing above it;
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
      name: 'platform-imports-nothing-above',
      severity: 'error',
      comment:
        'The platform (config, logger, database, mail, ApiError and its codes, health checks) is the bottom layer: it imports nothing above it (the kernel, the HTTP kernel, the identity core, the features, the CLI).',
      from: { path: '^src/platform/' },
      to: { path: '^src/(kernel|http|identity|modules|cli)/' },
    },
    {
      name: 'identity-imports-no-http',
      severity: 'error',
      comment:
        'The identity core (src/identity/) knows no HTTP: it never imports the HTTP kernel (src/http/). ApiError and its codes are in src/platform/.',
      from: { path: '^src/identity/' },
      to: { path: '^src/http/' },
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
      name: 'session-opens-in-sign-in',
      severity: 'error',
      comment:
        'One way in: a session opens only through the sign-in pipeline (signIn). Only src/identity/sign-in/ imports its session opener, src/identity/sign-in/open-session.ts; everything else calls signIn (docs/architecture.md, "One way a session opens").',
      from: { path: '^src/', pathNot: '^src/identity/sign-in/' },
      to: { path: '^src/identity/sign-in/open-session\\.(ts|mjs)$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycles, type-only imports counted like any other (scripts/deps.mjs hands them over as typeOnlyImport(), an exotic require: options below). AppContext is a leaf (src/kernel/context.types.ts) and the module names are declared by merging (src/kernel/module-names.ts), so nothing needs a cycle.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    // scripts/deps.mjs writes each type-only import as `typeOnlyImport('<specifier>')`.
    exoticRequireStrings: ['typeOnlyImport'],
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
  },
};
