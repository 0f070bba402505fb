/**
 * libsql, loaded when the daemon first opens a SQLite file, not when the kernel is imported:
 * loading it finds and loads the native addon, and picking the addon calls `process.report.getReport()`,
 * ~15–20 ms of a cold start that opens no file (no agent loaded). Node's own `require`, so opening a
 * file stays synchronous; libsql stays outside the bundle (scripts/build.mjs `EXTERNAL`).
 */
import { createRequire } from 'node:module';
import type Database from 'libsql';

let loaded: typeof Database | undefined;

/** libsql's `Database` class. */
export function libsql(): typeof Database {
  loaded ??= createRequire(import.meta.url)('libsql') as typeof Database;
  return loaded;
}
