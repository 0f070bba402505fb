/**
 * Child process of {@link ./file-reader.ts}: reads agent files the daemon did not write last, one request
 * at a time, and answers over IPC. `summary` is the kernel's own {@link inspectFile} (read-only open,
 * schema and config checks, password check): `{id, ok, config, passwordProtected}`; `whole` is
 * {@link readWholeFile} (every stored value; the daemon's own open checks the rest): `{id, ok}`. A refusal
 * answers the error it threw (code, message, status, details).
 *
 * Why a process and not a thread: libsql aborts its process on some hostile files (a TEXT value that is
 * not UTF-8), and an abort in a worker thread takes the daemon with it. Here it takes only this process.
 */
import { AgtError } from '@agt/contracts';
import { INSPECT_BUSY_TIMEOUT_MS, inspectFile } from '../agents/inspect-file.js';
import { readWholeFile } from '../agents/read-whole-file.js';
import { isPasswordProtected } from './key-access.js';

export interface FileReadRequest {
  id: number;
  op: 'summary' | 'whole';
  filePath: string;
}

export type FileReadReply =
  | { id: number; ok: true; config?: unknown; passwordProtected?: boolean }
  | {
      id: number;
      ok: false;
      error: { agt: boolean; code: string; message: string; status: number; details?: Record<string, unknown> };
    };

const send = (reply: FileReadReply) => process.send?.(reply);

process.on('message', async ({ id, op, filePath }: FileReadRequest) => {
  let reply: FileReadReply;
  try {
    if (op === 'whole') {
      await readWholeFile(filePath, INSPECT_BUSY_TIMEOUT_MS);
      reply = { id, ok: true };
    } else {
      const { config, passwordProtected } = await inspectFile(filePath, isPasswordProtected);
      reply = { id, ok: true, config, passwordProtected };
    }
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
  // JSON over IPC: details that do not serialize are dropped rather than fail the answer.
  try {
    send(reply);
  } catch {
    send(reply.ok ? reply : { id, ok: false, error: { ...reply.error, details: undefined } });
  }
});
// The daemon gone (even killed): nothing is left to answer.
process.on('disconnect', () => process.exit(0));
