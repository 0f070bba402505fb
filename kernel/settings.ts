/** Settings file and data directory (docs/environment.md): resolution, validation, atomic persistence. */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  SettingsSchema,
  type Settings,
  type SettingsService,
  assertValid,
  firstSchemaError,
  AgtError,
} from '@agt/contracts';
import { validTimeZone } from './time-zone.js';
import { cronProblem } from './cron-expression.js';
import type { DaemonEnv } from './env.js';
import { StartupError } from './errors.js';
import { findInJson } from './json-walk.js';
import { isKeyMaterialName } from './key-material.js';

export function resolveSettingsPath(env: DaemonEnv, processEnv: NodeJS.ProcessEnv = process.env): string {
  if (env.settingsPath) return resolve(env.settingsPath);
  if (env.userDataDir) return resolve(env.userDataDir, 'settings.json');
  const xdg = processEnv.XDG_CONFIG_HOME;
  return join(xdg ? resolve(xdg) : join(homedir(), '.config'), 'agt', 'settings.json');
}

/** Creates the data directory 0700 when missing; an existing one keeps its mode. */
export function ensureDataDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
}

/** Writes a file atomically (temp file + rename) with the given mode. */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

function readSettingsFile(path: string): Settings {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new StartupError(`settings file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const problem = firstSchemaError(SettingsSchema, parsed);
  if (problem !== null) throw new StartupError(`settings file ${path} is invalid at ${problem}`);
  const zone = (parsed as Settings).timezone;
  if (zone !== undefined && !validTimeZone(zone))
    throw new StartupError(`settings file ${path}: timezone ${zone} is not a known IANA time zone`);
  const every = (parsed as Settings).backups?.every;
  const cron = every === undefined ? null : cronProblem(every, zone);
  if (cron !== null) throw new StartupError(`settings file ${path}: backups.every ${cron}`);
  return parsed as Settings;
}

/**
 * The path of the first key (in document order) named like key material, or null. Iterative: a value
 * nested arbitrarily deep is walked without recursion (request bodies are depth-limited before this).
 */
export function findKeyMaterial(value: unknown, path = ''): string | null {
  return findInJson(value, { entry: (key, _inner, at) => (isKeyMaterialName(key) ? at : null) }, undefined, path);
}

export class SettingsStore implements SettingsService {
  readonly dataDir: string;
  private settings: Settings;
  private listeners = new Set<(settings: Readonly<Settings>) => void>();

  constructor(readonly path: string) {
    this.dataDir = dirname(path);
    ensureDataDir(this.dataDir);
    this.settings = readSettingsFile(path);
  }

  current(): Readonly<Settings> {
    return this.settings;
  }

  onChange(listener: (settings: Readonly<Settings>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Merges top-level keys (a null or undefined value removes one), then as {@link replace}. */
  update(patch: { [K in keyof Settings]?: Settings[K] | null }): Settings {
    const next: Record<string, unknown> = { ...this.settings };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null || value === undefined) delete next[key];
      else next[key] = value;
    }
    return this.replace(next);
  }

  /** Validates the whole new value, persists it, then tells listeners. Throws `bad_request`. */
  replace(next: unknown): Settings {
    const valid = assertValid(SettingsSchema, next, 'settings');
    // The spend governor's days and months (docs/costs.md) need a zone this runtime knows.
    if (valid.timezone !== undefined && !validTimeZone(valid.timezone))
      throw new AgtError(
        'bad_request',
        `settings.timezone: ${valid.timezone.slice(0, 100)} is not a known IANA time zone`,
      );
    // Scheduled backups (docs/backups.md) need a cron expression the scheduler reads.
    const cron = valid.backups === undefined ? null : cronProblem(valid.backups.every, valid.timezone);
    if (cron !== null) throw new AgtError('bad_request', `settings.backups.every: ${cron.slice(0, 200)}`);
    writeFileAtomic(this.path, `${JSON.stringify(valid, null, 2)}\n`);
    this.settings = valid;
    for (const listener of this.listeners) listener(valid);
    return valid;
  }
}
