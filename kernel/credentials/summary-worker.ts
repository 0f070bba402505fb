/**
 * Worker thread of {@link ../credentials/summary-reader.ts}: reads the summary of one agent file at a time
 * with the kernel's own {@link inspectFile} (read-only open, schema and config checks, password check) and
 * answers `{id, ok, config, passwordProtected}` or the error it threw (code, message, status, details).
 *
 * Why a thread: opening a file is synchronous libsql work (~20 ms), the config schema is compiled once
 * per thread (~16 ms), and closing a file forces a full garbage collection (agents/handle-release.ts):
 * here all of it runs on this thread's own small heap, not on the daemon's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { AgtError } from '@agt/contracts';
import { inspectFile } from '../agents/inspect-file.js';
import { isPasswordProtected } from './key-access.js';

export interface SummaryRequest {
  id: number;
  filePath: string;
}

export type SummaryReply =
  | { id: number; ok: true; config: unknown; passwordProtected: boolean }
  | {
      id: number;
      ok: false;
      error: { agt: boolean; code: string; message: string; status: number; details?: Record<string, unknown> };
    };

const port = parentPort!;
port.on('message', async ({ id, filePath }: SummaryRequest) => {
  let reply: SummaryReply;
  try {
    const { config, passwordProtected } = await inspectFile(filePath, isPasswordProtected);
    reply = { id, ok: true, config, passwordProtected };
  } catch (error) {
    const agt = error instanceof AgtError;
    reply = {
      id,
      ok: false,
      error: {
        agt,
        code: agt ? error.code : 'internal_error',
        message: (error as Error)?.message ?? String(error),
        status: agt ? error.statusCode : 500,
        ...(agt && error.details ? { details: error.details } : {}),
      },
    };
  }
  try {
    port.postMessage(reply);
  } catch {
    // Details that cannot be cloned: the error without them.
    port.postMessage(reply.ok ? reply : { id, ok: false, error: { ...reply.error, details: undefined } });
  }
});
