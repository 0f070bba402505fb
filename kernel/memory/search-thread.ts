/**
 * The search worker (search-worker.mjs): one thread for the daemon, started at the first large search,
 * answering one search at a time in order. It never keeps the process alive (unref'd) and is ended at
 * shutdown ({@link endSearchThread}).
 */
import { Worker } from 'node:worker_threads';

export interface ThreadSearch {
  path: string;
  /** The words of the full-text part (none: no full-text part). */
  terms: string[];
  /** Float32 vector BLOB, or null for no vector part. */
  vector: Buffer | null;
  depth: number;
  /** Which copy of the file's 1-bit vectors is current, and what changed since the last search (memory-store.ts). */
  bits: { key: string; changed: number[] };
}

export interface ThreadResult {
  text: Array<{ id: number; score: number }>;
  vector: Array<{ id: number; distance: number }>;
}

const WORKER = new URL('./search-worker.mjs', import.meta.url);
let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, { resolve(result: ThreadResult): void; reject(error: Error): void }>();

function failAll(error: Error): void {
  for (const { reject } of waiting.values()) reject(error);
  waiting.clear();
}

function thread(): Worker {
  if (worker) return worker;
  // Plain JavaScript: no loader of the parent's (`--import tsx`) is needed, and none is paid for.
  const started = new Worker(WORKER, { execArgv: [] });
  started.unref();
  started.on('message', (reply: { id: number; ok: boolean; message?: string } & ThreadResult) => {
    const waiter = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (!waiter) return;
    if (reply.ok) waiter.resolve({ text: reply.text, vector: reply.vector });
    else waiter.reject(new Error(reply.message ?? 'memory search failed'));
  });
  started.on('error', (error) => failAll(error));
  started.once('exit', (code) => {
    if (worker === started) worker = undefined;
    failAll(new Error(`the memory search worker exited (${code})`));
  });
  worker = started;
  return started;
}

/** Runs one search on the worker. */
export function searchOnThread(search: ThreadSearch): Promise<ThreadResult> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    thread().postMessage({ id, ...search });
  });
}

/** Ends the worker (shutdown); searches under way reject. */
export async function endSearchThread(): Promise<void> {
  const current = worker;
  worker = undefined;
  if (current) await current.terminate();
}
