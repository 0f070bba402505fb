/**
 * Restoring a backup (docs/backups.md): the copy is unsealed (a sealed one needs the unlocked owner
 * identity it was sealed to), checked (`PRAGMA integrity_check`, the agent-file marker, a schema version
 * this build reads) on a temporary file beside the target, linked into place (never over an existing
 * file, never over a loaded agent's file) and loaded: under its own id and identity (same DID), or with
 * `asNew` under a fresh id with a fresh key pair and attestations (the owner must be ready).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, copyFileSync, constants, existsSync, linkSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { AgtError, type Settings } from '@agt/contracts';
import type { AgentIdentityService } from '../agent-identity/service.js';
import { AgentFile } from '../agents/agent-file.js';
import { DEFAULT_AGENTS_SUBFOLDER } from '../agents/create-agent.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { canonicalPath, type AgentRegistry } from '../agents/registry.js';
import { SCHEMA_VERSION } from '../agents/schema.js';
import { requireReadyIdentity } from '../identity/index.js';
import type { IdentityService } from '../identity/types.js';
import {
  backupInvalid,
  pathNotAbsolute,
  restoredIdLoaded,
  restoreSourceMissing,
  restoreTargetExists,
  restoreTargetLoaded,
  sealedToAnotherOwner,
} from './errors.js';
import { assertOutsideSandbox, placeCopy } from './paths.js';
import { isSealedFile, UnsealError, unsealFile } from './seal.js';
import { readStoredIdAndKey } from './scheduler.js';
import { SqliteJobError, verifySqliteFile } from './sqlite-job.js';

export interface RestoreInput {
  from: string;
  to?: string;
  start?: boolean;
  asNew?: boolean;
  /** With `asNew`: the copy's name (default the backup's). */
  name?: string;
}

export interface RestoreResult {
  agentId: string;
  name: string;
  filePath: string;
  did: string | null;
  schemaVersion: number;
  sealed: boolean;
  asNew: boolean;
  started: boolean;
}

export interface RestoreDeps {
  dataDir: string;
  settings: { current(): Readonly<Settings> };
  identity: IdentityService;
  registry: AgentRegistry;
  agentIdentity: AgentIdentityService;
  /** Starts a loaded agent (the start route's path); resolves whether it started. */
  start(agent: LoadedAgent): Promise<boolean>;
}

/** The folder new agents go to (settings `agentsFolder`, else ~/Documents/agt-agents), as create-agent. */
function agentsFolder(deps: RestoreDeps): string {
  const folder = deps.settings.current().agentsFolder;
  return folder ? resolve(deps.dataDir, folder) : join(homedir(), DEFAULT_AGENTS_SUBFOLDER);
}

function targetOf(deps: RestoreDeps, input: RestoreInput): string {
  const stem = basename(input.from).replace(/\.sealed$/, '');
  const name = stem.endsWith('.agt') ? stem : `${stem}.agt`;
  // `to` a folder (an existing one, or a path ending in /) or a file: the rule backups use (paths.ts).
  if (input.to !== undefined) return placeCopy('to', input.to, name);
  const folder = agentsFolder(deps);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return join(folder, name);
}

export async function restoreBackup(deps: RestoreDeps, input: RestoreInput): Promise<RestoreResult> {
  if (!isAbsolute(input.from)) throw pathNotAbsolute('from', input.from);
  if (!existsSync(input.from)) throw restoreSourceMissing(input.from);
  if (!statSync(input.from).isFile())
    throw new AgtError('bad_request', `${input.from} is not a file`, { details: { path: input.from } });
  if (input.name !== undefined && !input.asNew) {
    throw new AgtError(
      'bad_request',
      'name renames a restored copy: it takes asNew (agt restore --as-new --name …); a restore without it is the same agent',
      { details: { field: 'name' } },
    );
  }
  if (input.asNew) requireReadyIdentity(deps, 'restoring an agent under a new identity');
  const target = targetOf(deps, input);
  const loaded = deps.registry.byPath(target);
  if (loaded) throw restoreTargetLoaded(target, loaded.id);
  if (existsSync(target)) throw restoreTargetExists(target);
  if (!existsSync(dirname(target))) throw new AgtError('bad_request', `the folder of ${target} does not exist`);
  assertOutsideSandbox(deps.dataDir, target);

  const temp = join(dirname(target), `.restore-${randomBytes(6).toString('hex')}.agt`);
  const sealed = await isSealedFile(input.from);
  let placed = false;
  try {
    if (sealed) {
      try {
        await unsealFile(input.from, temp, deps.identity.ownerDid, (box) => deps.identity.ownerBoxOpen(box));
      } catch (error) {
        if (error instanceof UnsealError && error.reason === 'foreign_owner')
          throw sealedToAnotherOwner(input.from, error.message.match(/\((.*)\)/)?.[1] ?? 'unknown');
        if (error instanceof UnsealError) throw backupInvalid(input.from, 'damaged', error.message);
        throw error;
      }
    } else {
      copyFileSync(input.from, temp, constants.COPYFILE_EXCL);
    }
    chmodSync(temp, 0o600);
    let check: Awaited<ReturnType<typeof verifySqliteFile>>;
    try {
      check = await verifySqliteFile(temp);
    } catch (error) {
      throw backupInvalid(
        input.from,
        'corrupt',
        `not a readable SQLite database (${error instanceof SqliteJobError ? error.message : String(error)})`,
      );
    }
    if (check.integrity !== 'ok')
      throw backupInvalid(input.from, 'integrity', `integrity check failed: ${check.integrity}`);
    if (!check.marker || check.schemaVersion < 1)
      throw backupInvalid(input.from, 'foreign', 'not an agent file backup');
    if (check.schemaVersion > SCHEMA_VERSION)
      throw backupInvalid(
        input.from,
        'newer',
        `written by a newer agt (schema ${check.schemaVersion}; this build reads up to ${SCHEMA_VERSION})`,
      );
    const { id, key } = await readStoredIdAndKey(deps.registry, temp);
    // The backup of another key under a known id is another agent claiming it: only asNew brings it in.
    if (!input.asNew) deps.registry.known.check(id, key, input.from);
    const same = deps.registry.byId(id);
    if (same && !input.asNew) throw restoredIdLoaded(id, same.filePath);
    try {
      linkSync(temp, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw restoreTargetExists(target);
      throw error;
    }
    placed = true;
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${temp}${suffix}`, { force: true });
  }

  try {
    const file = AgentFile.open(target);
    if (input.asNew) {
      // A fresh id (and no handle: handles name one agent); the key pair follows once it is loaded.
      const config = { ...(file.config.get() as Record<string, unknown>) };
      config.id = `agt-${randomUUID()}`;
      delete config.handle;
      if (input.name !== undefined) config.name = input.name;
      file.config.put(config as never);
    }
    const agent = await deps.registry.load(canonicalPath(target), { file });
    const did = input.asNew
      ? deps.agentIdentity.regenerate(agent).did
      : deps.agentIdentity.describe(agent.file, agent.id).did;
    const started = input.start === true ? await deps.start(agent) : false;
    return {
      agentId: agent.id,
      name: agent.name,
      filePath: agent.filePath,
      did,
      schemaVersion: agent.file.version,
      sealed,
      asNew: input.asNew === true,
      started,
    };
  } catch (error) {
    // A file that could not load stays where it is (it is a sound copy); the answer says where.
    if (placed && error instanceof AgtError) {
      throw new AgtError(error.code, `restored to ${target} but not loaded: ${error.message}`, {
        status: error.statusCode,
        details: { ...error.details, filePath: target },
      });
    }
    throw error;
  }
}
