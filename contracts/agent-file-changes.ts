/**
 * The kernel's own writes to agent files, told to extensions before the request that made them
 * answers. An extension that keeps an index of agent files (the shipped `tracked-folders`, or a
 * third-party one) learns of them here rather than from a file watcher, which only catches up later:
 * right after `POST /agents/create`, the new file is already in the index, so `GET /tracked-folders`
 * counts it and `POST /agents/{name}/start` finds it.
 */
import { createExtensionPoint } from './extension.js';

/**
 * What the kernel did to the file:
 * - `created`: a new agent file (`POST /agents/create`), complete on disk, reviewed on this machine, and
 *   loaded unless the load failed (`422 load_failed` leaves the file in place: it is told all the same);
 * - `changed`: the kernel rewrote a loaded agent's config (`PUT`/`PATCH /agents/{id}/config`, the
 *   agent's `sys_update_config`, an extension's `ctx.agents.updateConfig`): its name, handle or
 *   `autostart` may differ now.
 *
 * More kinds may come in a later minor version of the contract: an observer ignores kinds it does not know.
 *
 * @beta
 */
export type AgentFileChangeKind = 'created' | 'changed';

/** @beta */
export interface AgentFileChange {
  change: AgentFileChangeKind;
  /** The file's real absolute path (symbolic links resolved). */
  filePath: string;
  /** The agent's id. */
  agentId: string;
}

/** @beta */
export interface AgentFileObserver {
  /**
   * Told after the kernel wrote the file and before the request (or tool call) that wrote it answers:
   * what the observer serves from then on must reflect the change. Must not load, unload or write agent
   * files. The kernel waits at most {@link AGENT_FILE_NOTICE_DEADLINE_MS}; a throw, a rejection or a
   * longer wait is logged (naming the extension) and never fails the request, whose write is done.
   */
  written(change: Readonly<AgentFileChange>): Promise<void> | void;
}

/**
 * The most the kernel waits for each observer of {@link agentFileObservers}.
 *
 * @beta
 */
export const AGENT_FILE_NOTICE_DEADLINE_MS = 5_000;

/**
 * All providers, in load order, told at the same time; the kernel waits for every one of them (each
 * within {@link AGENT_FILE_NOTICE_DEADLINE_MS}) before it answers. Offered by `tracked-folders`.
 *
 * @beta
 */
export const agentFileObservers = createExtensionPoint<AgentFileObserver>('agt.agent-file-written', {
  providers: 'all',
});
