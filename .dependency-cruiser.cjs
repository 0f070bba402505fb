/**
 * The import boundaries, checked by dependency-cruiser from `npm test` (scripts/test.mjs) and alone with
 * `npm run lint:deps`. Imports are resolved the way the build and tsx resolve them (tsconfig, the
 * `agt-source` condition of `@agt/contracts`), so a rule sees the file an import really reaches.
 *
 * Type-only imports count (`tsPreCompilationDeps`): a type import still makes one module know another's
 * shape, which is what the layering is about, it is one keyword away from a runtime import, and an
 * extension's type import of `kernel/` would not resolve for a third-party author at all.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'extension-imports-kernel',
      comment:
        'An extension reaches the kernel only through ctx (README "Writing an extension"); it imports @agt/contracts.',
      severity: 'error',
      from: { path: '^(extensions|examples|test/fixtures/extensions)/' },
      to: { path: '^kernel/' },
    },
    {
      name: 'extension-imports-contracts-by-path',
      comment:
        'Shipped extensions and examples import @agt/contracts by name, as a third-party package must: never ../../contracts/.',
      severity: 'error',
      from: { path: '^(extensions|examples)/' },
      // A relative path is a `local` dependency; the package name is `aliased` (the workspace link),
      // or `undetermined` from a folder with a package.json of its own (examples/*).
      to: { path: '^contracts/', dependencyTypes: ['local'], dependencyTypesNot: ['aliased'] },
    },
    {
      name: 'kernel-imports-contracts-by-name',
      comment:
        'The kernel imports the contract as @agt/contracts, like an extension, so it can only use what the package exports; ' +
        'what only the kernel uses lives in kernel/. Its one path import is contracts/package.json (the contract version the kernel ships).',
      severity: 'error',
      from: { path: '^kernel/' },
      to: {
        path: '^contracts/',
        pathNot: '^contracts/package\\.json$',
        dependencyTypes: ['local'],
        dependencyTypesNot: ['aliased'],
      },
    },
    {
      name: 'shipped-code-imports-no-dev-dependency',
      comment:
        'What ships (kernel/, extensions/, contracts/, cli/) runs with `npm install --omit=dev`: it imports no devDependency, statically or lazily ' +
        '(`ws`, `undici`, the test servers and type packages are for tests, benchmarks and the type-check). A type-only import is erased and may name one.',
      severity: 'error',
      from: { path: '^(kernel|extensions|contracts|cli)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'contracts-stand-alone',
      comment: 'contracts/ is the package @agt/contracts: it imports neither the kernel nor an extension.',
      severity: 'error',
      from: { path: '^contracts/' },
      to: { path: '^(kernel|extensions|examples|test)/' },
    },
    {
      name: 'cli-is-a-client',
      comment:
        'The agt command talks to the daemon over HTTP only: it imports neither the kernel nor an extension (and stays a small start for --help).',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(kernel|extensions|examples|test)/' },
    },
    {
      name: 'kernel-folder-layers',
      comment:
        'Kernel folders build on each other one way: credentials/ and agent-identity/ on agents/, agent-identity/ on credentials/. ' +
        'A lower folder gets what it needs from a higher one handed in (a function, a narrow interface), never by import.',
      severity: 'error',
      from: { path: '^kernel/(agents|credentials)/' },
      to: { path: '^kernel/(agent-identity|credentials)/', pathNot: '^kernel/$1/' },
    },
    {
      name: 'kernel-spend-below-runtime',
      comment:
        'runtime/ uses the spend governor; spend/ names the approval steps it needs (BudgetApprovals) instead of importing runtime/.',
      severity: 'error',
      from: { path: '^kernel/spend/' },
      to: { path: '^kernel/runtime/' },
    },
    {
      name: 'kernel-agents-below-runtime',
      comment:
        'runtime/ builds on agents/ (loaded agents, their files and stores); agents/ never imports runtime/: what both need lives in agents/ ' +
        '(limit-defaults.ts, fetch-policy.ts), and what reaches a running agent (ctx.agents.turns, ctx.agents.fetch) lives in runtime/ and is wired in composition/agent-access.ts.',
      severity: 'error',
      from: { path: '^kernel/agents/' },
      to: { path: '^kernel/runtime/' },
    },
    {
      name: 'kernel-extensions-below-runtime',
      comment:
        'runtime/ uses the extension host (contributions, kernel points); extensions/ names what it reads of a runtime (GaugedRuntime) instead of importing runtime/.',
      severity: 'error',
      from: { path: '^kernel/extensions/' },
      to: { path: '^kernel/runtime/' },
    },
    {
      name: 'kernel-settings-below-spend',
      comment:
        'spend/ reads settings; settings.ts checks time zones with time-zone.ts, never by importing spend/ (which reaches agents/ and back to settings: a folder loop).',
      severity: 'error',
      from: { path: '^kernel/settings\\.ts$' },
      to: { path: '^kernel/spend/' },
    },
    {
      name: 'no-circular',
      comment:
        'No import circles: hand a module what it needs (a function, a narrow interface) instead of importing its owner.',
      severity: 'error',
      from: { path: '^(kernel|contracts|extensions|cli)/' },
      to: { circular: true },
    },
  ],
  options: {
    // What is checked (`depcruise --config .dependency-cruiser.cjs .`): the CLI, the kernel, the contracts, the
    // extensions, the examples and the test fixtures that are extensions.
    // Packages are seen (for the devDependency rule) but not followed into.
    includeOnly: { path: '^((cli|kernel|contracts|extensions|examples|test/fixtures/extensions)/|node_modules/)' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      conditionNames: ['agt-source', 'import', 'default'],
      exportsFields: ['exports'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
