#!/usr/bin/env node
/**
 * Builds the console UI (extensions/console/ui/) into one folder: index.html, app.js (Preact, signals
 * and uPlot bundled, minified, browser target) and app.css, with source maps. No CDN, no network at run
 * time. Fails when the JS + CSS gzipped pass {@link BUDGET_BYTES} (150 KB).
 * `scripts/build.mjs` runs it into `dist/console/`; the console test runs it into a temp folder.
 *
 * Usage: node scripts/build-console.mjs [outDir]   (default dist/console)
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const UI = join(ROOT, 'extensions', 'console', 'ui');
export const BUDGET_BYTES = 150 * 1024;

/** Builds into `outDir`; returns the gzipped size of the JS + CSS. */
export async function buildConsole(outDir) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { app: join(UI, 'main.tsx') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    conditions: ['agt-source'],
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await build({
    entryPoints: { app: join(UI, 'app.css') },
    outdir: outDir,
    bundle: true,
    minify: true,
    logLevel: 'warning',
  });
  copyFileSync(join(UI, 'index.html'), join(outDir, 'index.html'));
  const gzipped = ['app.js', 'app.css'].reduce(
    (sum, name) => sum + gzipSync(readFileSync(join(outDir, name))).length,
    0,
  );
  if (gzipped > BUDGET_BYTES)
    throw new Error(`console UI is ${gzipped} bytes gzipped, over the ${BUDGET_BYTES}-byte budget`);
  return gzipped;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = resolve(process.argv[2] ?? join(ROOT, 'dist', 'console'));
  buildConsole(out).then(
    (bytes) => process.stdout.write(`agt: console UI built into ${out} (${(bytes / 1024).toFixed(1)} KB gzipped)\n`),
    (error) => {
      process.stderr.write(`agt: console build failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
