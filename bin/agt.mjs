#!/usr/bin/env node
// The `agt` command, the daemon's client. It runs the build in dist/cli/ (made by `npm run build`, which
// `npm install` runs through `prepare`) when that build is newer than every file in cli/; otherwise it
// runs the TypeScript sources through tsx, so what runs is never older than what is on disk. The client
// imports nothing of the daemon, so only cli/ (and contracts/events.ts, the event types it bundles) is
// compared, and `agt --help` stays a small start.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = join(root, 'dist', 'cli', 'index.js');

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function current() {
  try {
    if (!existsSync(built)) return false;
    const { builtAt } = JSON.parse(readFileSync(join(root, 'dist', '.agt-build.json'), 'utf8'));
    // cli/ and the one contracts file it bundles (the event types it listens for).
    const events = join(root, 'contracts', 'events.ts');
    const sources = Math.max(
      existsSync(join(root, 'cli')) ? newest(join(root, 'cli')) : 0,
      existsSync(events) ? statSync(events).mtimeMs : 0,
    );
    return sources <= builtAt;
  } catch {
    return false;
  }
}

if (current()) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/index.ts');
}
