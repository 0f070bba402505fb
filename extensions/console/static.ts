/**
 * The console's page shell: the files the build put in the UI folder (`dist/console/`: index.html,
 * app.js, app.css, maps). Served by an allow-list read once at start (the folder's own file names), so
 * no request path ever reaches the file system; every answer carries the strict CSP below.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * No inline script or style, nothing from another origin, never framed. `connect-src 'self'` covers the
 * API and the event stream; images only from the page's own origin or data: (uPlot draws on a canvas).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every console answer (page, assets, and the console's JSON routes). */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

export interface UiFile {
  body: Buffer;
  type: string;
}

/** Where the built UI is: the configured folder, else `dist/console/` of this installation (built or from sources). */
export function findUiDir(configured: string | undefined): string | undefined {
  const candidates = configured
    ? [configured]
    : [
        fileURLToPath(new URL('../../console/', import.meta.url)),
        fileURLToPath(new URL('../../dist/console/', import.meta.url)),
      ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/** The UI's files by name (flat folder), read once: a rebuild needs a restart of the extension. */
export function loadUiFiles(dir: string | undefined): Map<string, UiFile> {
  const files = new Map<string, UiFile>();
  if (!dir) return files;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const dot = entry.name.lastIndexOf('.');
    const type = TYPES[dot >= 0 ? entry.name.slice(dot) : ''];
    if (entry.isFile() && type) files.set(entry.name, { body: readFileSync(join(dir, entry.name)), type });
  }
  return files;
}
