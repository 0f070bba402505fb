/**
 * Worker thread of test/helpers/agent-file.ts: creates agent files with the real {@link AgentFile} class
 * (create, close) and answers `{id}` or the error it threw. Why a thread: closing a file forces a full
 * garbage collection (kernel/agents/handle-release.ts), ~50–200 ms on a test process's heap (the kernel,
 * an in-process daemon, tap) and ~2 ms on this thread's small one; tests create hundreds of files.
 */
import { parentPort } from 'node:worker_threads';
import type { AgentConfig } from '../../contracts/agent-config.js';
import { AgentFile } from '../../kernel/agents/agent-file.js';

export interface CreateRequest {
  id: number;
  path: string;
  config: AgentConfig;
  version?: number;
  files?: Record<string, string>;
  sql?: string[];
}

export type CreateReply = { id: number; error?: { message: string; name: string; props: Record<string, unknown> } };

const port = parentPort!;
port.on('message', async ({ id, path, config, version, files, sql }: CreateRequest) => {
  let reply: CreateReply = { id };
  try {
    const file = AgentFile.create(path, config, { version });
    try {
      for (const [name, text] of Object.entries(files ?? {})) file.files.write(name, text);
      for (const statement of sql ?? []) file.raw.exec(statement);
    } finally {
      await file.close();
    }
  } catch (error) {
    const err = error as Error & Record<string, unknown>;
    // The error's own fields (code, statusCode, details) travel with it; they are plain data.
    const props = Object.fromEntries(
      Object.entries(err).filter(
        ([, value]) =>
          value === null ||
          typeof value !== 'object' ||
          !('constructor' in value) ||
          value.constructor === Object ||
          Array.isArray(value),
      ),
    );
    reply = { id, error: { message: err?.message ?? String(error), name: err?.name ?? 'Error', props } };
  }
  port.postMessage(reply);
});
