/**
 * The storage service (`kernel.storage`, docs/backups.md): backups, restores, the backup schedule, the
 * WAL and retention maintenance, the `storage` part of an agent's status and Letta Agent File (.af)
 * export and import. Built once in kernel/composition/storage.ts; `stop()` is a shutdown step.
 */
import type { EventBus, Logger, ToolDefinition } from '@agt/contracts';
import type { AgentIdentityService } from '../agent-identity/service.js';
import { createAgent, type CreateAgentDeps } from '../agents/create-agent.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import { startAgent } from '../agents/start-agent.js';
import type { SettingsStore } from '../settings.js';
import { backupFile, backupsRoot, type BackupOptions, type BackupResult } from './backup.js';
import { listBackupFiles, type BackupFileEntry } from './backup-files.js';
import { exportAgentFile, importedConfig, MEMORY_PREFIX, readAgentFile } from './letta-af.js';
import { credentialIn } from '../memory/credential-check.js';
import { MAX_MEMORY_CHARS } from '../memory/memory-store.js';
import { applyWalPolicy, StorageMaintenance, type StorageInfo } from './maintenance.js';
import { restoreBackup, type RestoreInput, type RestoreResult } from './restore.js';
import { BackupScheduler, readStoredIdAndKey } from './scheduler.js';

export interface StorageServiceDeps extends CreateAgentDeps {
  registry: AgentRegistry;
  agentIdentity: AgentIdentityService;
  settings: SettingsStore;
  bus: EventBus;
  logger: Logger;
  builtinTools: () => readonly ToolDefinition[];
  /** True when no turn runs for the agent. */
  isIdle(agent: LoadedAgent): boolean;
  /** Every agent file the agent locators list (the tracked folders). */
  knownFiles(): Promise<readonly string[]>;
}

export interface ImportResult {
  agentId: string;
  name: string;
  filePath: string;
  did: string;
  started: boolean;
  imported: { blocks: number; memories: number; messages: number; tools: string[]; toolsNotMapped: string[] };
  skipped: Record<string, number>;
}

export class StorageService {
  readonly scheduler: BackupScheduler;
  readonly maintenance: StorageMaintenance;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly deps: StorageServiceDeps) {
    this.scheduler = new BackupScheduler({ ...deps, knownFiles: () => deps.knownFiles() });
    this.maintenance = new StorageMaintenance({
      settings: deps.settings,
      agents: () => deps.registry.list(),
      isIdle: (agent) => deps.isIdle(agent),
      logger: deps.logger,
      umbilical: deps.registry.umbilical,
    });
    // Every loaded agent's connection gets the owner's WAL bound at once (AgentFile.open set the default).
    this.unsubscribe.push(
      deps.bus.subscribe((event) => {
        if (event.event_type !== 'agent.loaded' || !event.agent_id) return;
        const agent = deps.registry.byId(event.agent_id);
        if (agent) applyWalPolicy(agent.file, deps.settings.current().storage?.walMaxBytes);
      }),
      deps.settings.onChange(() => this.maintenance.start()),
    );
    this.maintenance.start();
  }

  /** `POST /agents/{id}/backup`. */
  backup(agent: LoadedAgent, options: BackupOptions): Promise<BackupResult> {
    return backupFile(this.deps, agent.filePath, agent.id, options);
  }

  /** `GET /backups/files`: the copies in the backups folder (settings `backups.dir`, else `<data dir>/backups`). */
  backupFiles(): Promise<{ dir: string; files: BackupFileEntry[] }> {
    const dir = backupsRoot(this.deps);
    return listBackupFiles(dir).then((files) => ({ dir, files }));
  }

  /** `POST /agents/{id}/backup` of an agent file that is not loaded (read-only for its id, never leased). */
  async backupFile(filePath: string, options: BackupOptions): Promise<BackupResult> {
    const { id } = await readStoredIdAndKey(this.deps.registry, filePath);
    return backupFile(this.deps, filePath, id, options);
  }

  /** `POST /agents/restore`. */
  restore(input: RestoreInput): Promise<RestoreResult> {
    return restoreBackup(
      {
        ...this.deps,
        start: async (agent) => (await startAgent(this.deps, agent)).started,
      },
      input,
    );
  }

  storageOf(agent: LoadedAgent): StorageInfo {
    return this.maintenance.storageOf(agent);
  }

  /** `GET /agents/{id}/export?format=af`. */
  exportAf(agent: LoadedAgent): Record<string, unknown> {
    return exportAgentFile(agent, this.deps.builtinTools());
  }

  /**
   * `POST /agents/import {format: 'af', document}`: a new agent (created as `POST /agents/create` makes
   * one: its own identity, reviewed, tracked, loaded) holding what maps of the document.
   */
  async importAf(
    document: unknown,
    options: { directory?: string; start?: boolean; name?: string } = {},
  ): Promise<ImportResult> {
    const data = readAgentFile(document);
    const created = await createAgent(this.deps, {
      name: options.name ?? data.name,
      ...(options.directory ? { directory: options.directory } : {}),
    });
    const agent = this.deps.registry.resolve(created.agentId);
    const builtin = this.deps.builtinTools();
    await this.deps.registry.updateConfig(agent, importedConfig(agent.fileConfig, data, builtin));
    const known = new Set(builtin.map((tool) => tool.name));
    const file = agent.file;
    // Each block is also a pinned memory (Letta keeps blocks in every prompt; agt recalls pinned memories in
    // every turn), when it can be one: not empty, not longer than a memory, no credential shape (a new
    // agent has no sealed values yet, so the shape check is the whole check).
    const skipped = { ...data.skipped };
    const memoryIds = new Map<string, number>();
    file.transaction(() => {
      const now = Date.now();
      for (const block of data.blocks) {
        file.files.write(
          `${MEMORY_PREFIX}${block.label}.md`,
          block.value,
          'text/markdown',
          block.readOnly ? 'readonly' : 'none',
        );
        const text = block.value.trim();
        const unfit =
          text === ''
            ? 'empty'
            : text.length > MAX_MEMORY_CHARS
              ? 'too_long'
              : credentialIn(text, [])
                ? 'credential'
                : null;
        if (unfit) skipped[`memories:${unfit}`] = (skipped[`memories:${unfit}`] ?? 0) + 1;
        else
          memoryIds.set(
            block.label,
            file.memory.add({ text, kind: block.kind, source: 'owner', pinned: true }, now).id,
          );
      }
      const meta = Object.fromEntries(
        data.blocks.map((block) => [
          block.label,
          {
            limit: block.limit,
            description: block.description,
            ...(memoryIds.has(block.label) ? { memory_id: memoryIds.get(block.label) } : {}),
          },
        ]),
      );
      if (data.blocks.length > 0) file.meta.set('letta.blocks', JSON.stringify(meta), { actor: 'owner' });
      const foreign = data.toolNames.filter((name) => !known.has(name));
      if (foreign.length > 0) file.meta.set('letta.tools', JSON.stringify(foreign), { actor: 'owner' });
      for (const message of data.messages) {
        file.loop.append({
          role: message.role,
          kind: 'message',
          content: { text: message.text },
          ...(message.createdAt !== null ? { createdAt: message.createdAt } : {}),
        });
      }
    });
    const started = options.start === true ? (await startAgent(this.deps, agent)).started : false;
    return {
      agentId: agent.id,
      name: agent.name,
      filePath: agent.filePath,
      did: created.did,
      started,
      imported: {
        blocks: data.blocks.length,
        memories: memoryIds.size,
        messages: data.messages.length,
        tools: data.toolNames.filter((name) => known.has(name)),
        toolsNotMapped: data.toolNames.filter((name) => !known.has(name)),
      },
      skipped,
    };
  }

  /** Shutdown: no new pass or run; a run in progress is waited for. */
  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.maintenance.stop();
    await this.scheduler.stop();
  }
}
