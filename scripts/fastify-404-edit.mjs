/**
 * A performance trick of the build (scripts/build.mjs applies it to the bundle): one edit of fastify's
 * code making start-up work happen on first use. Fastify adds each not-found handler to its 404 router for
 * all 35 HTTP methods, twice (`prefix` and `prefix/*`); with the not-found handler of every extension's
 * scope (kernel/extensions/unavailable.ts) that is ~800 routes at start. Here they are kept in order and
 * added to that router before its first use (lookup, find, compile, printing), so it holds the same
 * routes; the same path given twice is added at once, so find-my-way's "already declared" error is thrown
 * where it was.
 *
 * What it buys: 10–12% of a cold start's CPU to the first 200 (median 420 → 370 ms and 390 → 350 ms in two
 * runs of 11 starts alternating with a build without it, bench/start-profile.ts; docs/performance.md,
 * "Tricks kept and removed").
 * How it is tested: test/router-edits.test.ts checks on dist/ the answers it re-implements (every GET
 * route routed, near misses not, the not-found answers in their order for every method); the build fails
 * if a passage is no longer in fastify as written (an upgrade changed it: measure again, or remove it).
 * How to remove it: delete this file and its import and entry in scripts/build.mjs (`DEPENDENCY_EDITS`);
 * `node scripts/build.mjs --out=<folder> --without=fastify-404-edit` builds without it for an A/B.
 */
const NOT_FOUND_ROUTER = `    defaultRoute: fourOhFourFallBack
  })
`;
const NOT_FOUND_ROUTES = `    router.all(prefix + (prefix.endsWith('/') ? '*' : '/*'), routeHandler, context)
    router.all(prefix, routeHandler, context)`;
export const FASTIFY_404_EDIT = {
  name: 'fastify-404-edit',
  file: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]four-oh-four\.js$/,
  edits: [
    [
      NOT_FOUND_ROUTER,
      `${NOT_FOUND_ROUTER}
  // agt's build (scripts/fastify-404-edit.mjs): not-found routes are added to this router before its first use.
  const deferred = []
  const deferredPaths = new Set()
  const addDeferred = () => {
    for (const [path, handler, store] of deferred.splice(0)) router.all(path, handler, store)
  }
  const deferAll = (path, handler, store) => {
    if (deferredPaths.has(path)) {
      addDeferred()
      router.all(path, handler, store)
      return
    }
    deferredPaths.add(path)
    deferred.push([path, handler, store])
  }
  for (const name of ['lookup', 'find', 'compile', 'prettyPrint', 'hasRoute', 'findRoute', 'on', 'off', 'reset']) {
    const method = router[name]
    router[name] = function (...args) {
      if (deferred.length > 0) addDeferred()
      return method.apply(this, args)
    }
  }
`,
    ],
    [NOT_FOUND_ROUTES, NOT_FOUND_ROUTES.replaceAll('router.all(', 'deferAll(')],
  ],
};
