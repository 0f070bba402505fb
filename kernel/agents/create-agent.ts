/**
 * Creating an agent (`POST /agents/create`, docs/creating-agents.md). Checks, in this order, so that a
 * refused request leaves nothing behind:
 * 1. the owner identity is ready (409 `identity_not_ready` with `identity`);
 * 2. the body: `name` (the shared rule of contracts/names.ts after trimming, and an ASCII letter or digit),
 *    `directory` (absolute, existing directory), `provider` (an id in settings.providers) (400 `bad_request`);
 * 3. the template: exists, valid, reviewed (422 `template_missing` / `template_invalid` / `template_unreviewed`);
 * 4. the password: required when the template's `security.password_required` is true (400
 *    `password_required`); `passwordConfirm`, when sent, must equal `password` (403 `wrong_password`);
 * 5. the file name `<slug of name>.agt` is free in the directory (409 `name_taken`).
 * Then the create order of section 4: template instance, sealed identity with owner attestation and runtime
 * stamp, marked reviewed, directory tracked, loaded, started when `start`. A failed load answers 422
 * `load_failed` and leaves the created file in place.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Type, type Static } from 'typebox';
import { AgentConfigSchema } from './config-schema.js';
import {
  type AgentConfig,
  AgtError,
  badRequest,
  DEFAULT_MAX_SCAN_DEPTH,
  type AppProviderSettings,
  firstSchemaError,
  type Logger,
} from '@agt/contracts';
import { assertAgentName } from '../http-api/names.js';
import { AgentFile } from './agent-file.js';
import {
  agentNameTaken,
  cannotCreateAgentFile,
  createdButNotLoaded,
  passwordMismatch,
  passwordRequired,
} from './errors.js';
import type { LoadedAgent } from './loaded-agent.js';
import { canonicalPath } from './registry.js';
import { requireReadyIdentity } from '../identity/index.js';
import { templateYieldsInvalidConfig } from '../templates/errors.js';
import { defaultTemplateId, resolveTemplate } from '../templates/resolve.js';
import type { TemplateConfig } from '../templates/types.js';
import { startAgent, type StartDeps } from './start-agent.js';
import { announceAgentFileChange } from '../extensions/agent-file-notices.js';
import type { IdentityService } from '../identity/types.js';
import type { SettingsStore } from '../settings.js';

/** What creating an agent uses of the kernel. */
export interface CreateAgentDeps extends StartDeps {
  dataDir: string;
  settings: SettingsStore;
  logger: Logger;
  identity: IdentityService;
  /**
   * The agent-key and credential steps of a creation, as narrow as they are used: agent-identity/ and
   * credentials/ build on agents/, so agents/ names what it needs instead of importing them (no folder loop).
   */
  agentIdentity: {
    initialize(
      file: AgentFile,
      agentId: string,
      password?: string,
    ): Promise<{ did: string; envelope: { id: string }; dataKey: Uint8Array }>;
  };
  credentials: {
    keys: { prime(agentId: string, envelopeId: string, dataKey: Uint8Array): void; forget(agentId: string): unknown };
  };
}

export const MAX_NAME_LENGTH = 64;
/** Where agents go when neither `directory` nor settings.agentsFolder says: a documents subfolder. */
export const DEFAULT_AGENTS_SUBFOLDER = join('Documents', 'agt-agents');

/** The body of `POST /agents/create` (its schema is the route's validation and OpenAPI entry). */
export const CreateBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ maxLength: MAX_NAME_LENGTH, description: 'omitted: a generated name such as "Swift Otter"' }),
    ),
    directory: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'absolute existing directory; default settings.agentsFolder, else ~/Documents/agt-agents (created)',
      }),
    ),
    template: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'template id; default settings.defaultTemplateId, else `standard`',
      }),
    ),
    provider: Type.Optional(Type.String({ minLength: 1, description: 'an app provider id from settings.providers' })),
    model: Type.Optional(
      Type.String({ minLength: 1, description: "model id; default the provider's defaultModel, else the template's" }),
    ),
    start: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'start it now; also sets `autostart: true` in its config, so it starts again after a daemon restart',
      }),
    ),
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'protects the agent: needed to unlock its credentials; never autostarted',
      }),
    ),
    passwordConfirm: Type.Optional(
      Type.String({ maxLength: 1024, description: 'optional: must equal `password` (403 `wrong_password`)' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateBody = Static<typeof CreateBody>;

export const CreateReply = Type.Object({
  agentId: Type.String(),
  name: Type.String(),
  filePath: Type.String(),
  did: Type.String({ description: "the agent's own did:key" }),
  started: Type.Boolean({ description: 'false unless `start` was true and the runtime started it' }),
});

const ADJECTIVES = [
  'Amber',
  'Bold',
  'Bright',
  'Brisk',
  'Calm',
  'Clever',
  'Gentle',
  'Keen',
  'Lucky',
  'Merry',
  'Nimble',
  'Noble',
  'Quiet',
  'Sunny',
  'Swift',
  'Witty',
];
const NOUNS = [
  'Badger',
  'Beaver',
  'Falcon',
  'Finch',
  'Fox',
  'Heron',
  'Ibis',
  'Koala',
  'Lynx',
  'Marten',
  'Otter',
  'Puffin',
  'Raven',
  'Robin',
  'Wren',
  'Yak',
];

/** The file name stem of an agent name: lowercase ASCII letters, digits and dashes. */
export function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_NAME_LENGTH);
}

/**
 * The shared agent-name rule (contracts/names.ts) on the trimmed name, plus an ASCII letter or digit for the file name.
 */
function checkName(raw: string): string {
  const name = assertAgentName(raw.trim());
  if (slugOf(name) === '') throw badRequest('name must contain at least one ASCII letter or digit (it names the file)');
  return name;
}

/** A free "Adjective Noun" name in `dir` (a number is appended after a few collisions). */
function generateName(dir: string): string {
  for (let attempt = 0; ; attempt++) {
    const base = `${ADJECTIVES[randomInt(ADJECTIVES.length)]} ${NOUNS[randomInt(NOUNS.length)]}`;
    const name = attempt < 8 ? base : `${base} ${attempt}`;
    if (!existsSync(join(dir, `${slugOf(name)}.agt`))) return name;
  }
}

/** The target directory; `create` when it is a default that does not exist yet. */
function targetDirectory(services: CreateAgentDeps, given: string | undefined): { path: string; create: boolean } {
  if (given !== undefined) {
    if (!isAbsolute(given)) throw badRequest(`directory must be an absolute path: ${given}`);
    let isDir = false;
    try {
      isDir = statSync(given).isDirectory();
    } catch {
      throw badRequest(`directory does not exist: ${given}`);
    }
    if (!isDir) throw badRequest(`directory is not a directory: ${given}`);
    return { path: realpathSync(given), create: false };
  }
  const folder = services.settings.current().agentsFolder;
  // A relative agentsFolder is read relative to the data directory.
  const path = folder ? resolve(services.dataDir, folder) : join(homedir(), DEFAULT_AGENTS_SUBFOLDER);
  if (!existsSync(path)) return { path, create: true };
  if (!statSync(path).isDirectory()) throw badRequest(`the agents folder is not a directory: ${path}`);
  return { path: realpathSync(path), create: false };
}

function checkProvider(services: CreateAgentDeps, id: string | undefined): AppProviderSettings | undefined {
  if (id === undefined) return undefined;
  const provider = services.settings.current().providers?.find((candidate) => candidate.id === id);
  if (!provider)
    throw badRequest(`provider "${id}" is not one of the app providers in settings.providers`, { provider: id });
  return provider;
}

function checkPassword(template: TemplateConfig, templateId: string, body: CreateBody): void {
  const required = (template.security as Record<string, unknown> | undefined)?.password_required === true;
  if (required && body.password === undefined) {
    throw passwordRequired(templateId);
  }
  if (body.passwordConfirm !== undefined) {
    if (body.password === undefined) throw badRequest('passwordConfirm was sent without password');
    if (body.passwordConfirm !== body.password) throw passwordMismatch();
  }
}

function buildConfig(
  services: CreateAgentDeps,
  template: TemplateConfig,
  templateId: string,
  name: string,
  provider: AppProviderSettings | undefined,
  model: string | undefined,
): AgentConfig {
  const now = new Date().toISOString();
  const config: AgentConfig = {
    ...template,
    id: `agt-${randomUUID()}`,
    name,
    model: {
      ...template.model,
      ...(provider
        ? { provider: provider.id, model_id: model ?? provider.defaultModel ?? template.model.model_id }
        : {}),
      ...(!provider && model ? { model_id: model } : {}),
    },
    metadata: {
      ...template.metadata,
      created_at: now,
      updated_at: now,
      ...(services.identity.ownerDid ? { author: services.identity.ownerDid } : {}),
    },
  };
  const problem = firstSchemaError(AgentConfigSchema, config);
  if (problem !== null) throw templateYieldsInvalidConfig(templateId, problem);
  return config;
}

/**
 * Adds the directory to settings.trackedFolders unless a tracked folder reaches it already: the same
 * real path, or a folder it lies within `maxScanDepth` levels of (a folder is never tracked twice).
 */
function trackFolder(services: CreateAgentDeps, dir: string): void {
  const current = services.settings.current();
  const folders = current.trackedFolders ?? [];
  const depth = current.maxScanDepth ?? DEFAULT_MAX_SCAN_DEPTH;
  const reaches = (folder: string) => {
    const below = relative(canonicalPath(resolve(folder)), dir);
    return below === '' || (!below.startsWith('..') && !isAbsolute(below) && below.split(sep).length <= depth);
  };
  if (folders.some(reaches)) return;
  services.settings.replace({ ...current, trackedFolders: [...folders, dir] });
}

/** Starts a loaded agent through the runtime's start hook; false when there is none or it failed. */
/** Removes a file that never became an agent (identity sealing failed), with its WAL companions. */
function removeHalfCreated(filePath: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${filePath}${suffix}`, { force: true });
}

/** Creates, seals, marks reviewed, tracks, loads and (with `start`) starts one agent; see the file comment. */
export async function createAgent(services: CreateAgentDeps, body: CreateBody) {
  requireReadyIdentity(services, 'creating an agent');
  const givenName = body.name === undefined ? undefined : checkName(body.name);
  const dir = targetDirectory(services, body.directory);
  const provider = checkProvider(services, body.provider);
  const templateId = body.template ?? defaultTemplateId(services);
  const template = resolveTemplate(services, templateId);
  checkPassword(template.config, templateId, body);
  const name = givenName ?? generateName(dir.path);
  const nameTaken = () => agentNameTaken(name, slugOf(name), dir.path);
  const filePath = join(dir.path, `${slugOf(name)}.agt`);
  if (existsSync(filePath)) throw nameTaken();
  const config = buildConfig(services, template.config, templateId, name, provider, body.model);
  // Created to run: it comes back after a daemon restart (the tracked-folders autostart), as users expect.
  if (body.start === true) config.autostart = true;

  if (dir.create) {
    try {
      mkdirSync(dir.path, { recursive: true, mode: 0o700 });
    } catch (error) {
      // A name too long, a parent that is a file, no permission: the caller's input, never a 500.
      throw cannotCreateAgentFile(dir.path, error);
    }
  }
  let file: AgentFile;
  try {
    file = AgentFile.create(filePath, config);
  } catch (error) {
    if (error instanceof AgtError && error.code === 'conflict') throw nameTaken();
    if (error instanceof AgtError) throw error;
    // The directory exists but cannot hold a database (read-only, a pseudo filesystem): the caller's input.
    removeHalfCreated(filePath);
    throw cannotCreateAgentFile(dir.path, error);
  }
  let sealed: Awaited<ReturnType<typeof services.agentIdentity.initialize>>;
  try {
    sealed = await services.agentIdentity.initialize(file, config.id, body.password);
    file.logs.write({
      level: 'info',
      origin: 'kernel',
      event: 'created',
      message: `agent created from template "${templateId}"`,
      data: { templateId, did: sealed.did },
    });
    // The lease row goes in with the rest, written in place and synced with them (agent-file.ts); the
    // registry's load finds it held and writes nothing.
    services.registry.leases.acquire(file);
    // Complete: a WAL file from here on, synced once (the file, then its folder), before anyone is told.
    file.finishCreation();
  } catch (error) {
    services.credentials.keys.forget(config.id);
    services.registry.leases.release(file);
    await file.close();
    removeHalfCreated(filePath);
    throw error;
  }
  const canonical = canonicalPath(filePath);
  services.registry.reviews.accept(config, canonical);
  trackFolder(services, realpathSync(dir.path));
  // The creator just gave the password: the new agent starts unlocked (until it is unloaded).
  if (body.password !== undefined) services.credentials.keys.prime(config.id, sealed.envelope.id, sealed.dataKey);
  sealed.dataKey.fill(0);

  let agent: LoadedAgent;
  // Indexes of agent files (tracked-folders) hold the new file before the caller hears back, loaded
  // or not (a failed load leaves it in place): start by name and listings see it at once.
  const announce = () =>
    announceAgentFileChange(services.contributions.points, services.logger, {
      change: 'created',
      filePath: canonical,
      agentId: config.id,
    });
  try {
    // The open file is handed over, not closed and opened again (closing waits for a full garbage
    // collection that releases libsql's handles: ~25 ms with 100 agents loaded, see handle-release.ts).
    // With the config just written and checked (buildConfig), which the load need not read back.
    agent = await services.registry.load(canonical, { file, config });
  } catch (error) {
    services.credentials.keys.forget(config.id);
    await announce();
    const cause = error instanceof AgtError ? error.code : 'internal_error';
    throw createdButNotLoaded(config.id, canonical, cause, error);
  }
  await announce();
  const started = body.start === true ? (await startAgent(services, agent)).started : false;
  return { agentId: agent.id, name: agent.name, filePath: canonical, did: sealed.did, started };
}
