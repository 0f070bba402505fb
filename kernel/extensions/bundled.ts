/**
 * Extension modules compiled into the daemon's one-script build (dist/agtd.cjs, scripts/daemon-bundle.mjs).
 * That build registers each extension module of the project here under the path of its file in dist/,
 * and the loader takes the module from here instead of importing that file: an import would load the
 * ES module build beside it, a second copy of the kernel's code. An extension that is not part of the
 * script (a third-party package, a module outside the project) is imported from its file as always.
 * Empty when the daemon runs from the ES modules in dist/ or from the sources.
 */
const modules = new Map<string, () => Promise<unknown>>();

/** Called once by the one-script build before the daemon starts: the absolute path of each file → its module. */
export function registerBundledModules(byFile: Record<string, () => Promise<unknown>>): void {
  for (const [file, load] of Object.entries(byFile)) modules.set(file, load);
}

/** The module compiled into the running script for `file` (an absolute path in dist/), if there is one. */
export function bundledModule(file: string): (() => Promise<unknown>) | undefined {
  return modules.get(file);
}
