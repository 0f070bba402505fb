/**
 * Test helper: builds agent files with the real {@link AgentFile} class. `createAgentFile(dir, partial)`
 * writes `<dir>/<name>.agt` holding a complete, valid AgentConfig (the partial is merged over defaults)
 * and returns its path; pass `{version: 1}` to build an old-schema file for migration tests.
 *
 * Files without a `seed` are made on a worker thread (agent-file-worker.ts: the same class, on a small
 * heap): closing a file forces a full garbage collection, which on the test process's heap cost the
 * suite ~0.1 s per file made.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AgentConfig } from '../../contracts/agent-config.js';
import { AgentFile } from '../../kernel/agents/agent-file.js';
import type { CreateReply, CreateRequest } from './agent-file-worker.js';

/** A complete, valid config; `overrides` replace top-level fields. */
export function agentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  const id = overrides.id ?? `agt-${randomUUID()}`;
  return {
    agt_version: '0.2',
    id,
    name: overrides.name ?? `agent-${id.slice(-8)}`,
    description: 'a test agent',
    state: 'idle',
    autonomous: false,
    model: { provider: 'local', model_id: 'test-model' },
    instructions: 'Be brief.',
    context: {},
    tools: [],
    triggers: {},
    security: {},
    limits: {},
    messaging: { mode: 'respond_only' },
    metadata: { created_at: 0, author: 'test' },
    ...overrides,
  };
}

export interface CreateAgentFileOptions {
  /** File name without folder; default `<name>.agt`. */
  fileName?: string;
  /** Schema version to write (default: current). */
  version?: number;
  /** Stored files (`file.files.write(name, text)`) written before it is closed. */
  files?: Record<string, string>;
  /** SQL run on the file (`file.raw.exec`) after the files, before it is closed (seed tables and rows). */
  sql?: string[];
  /** Runs on the open file before it is closed (seed rows); made in this thread then. */
  seed?: (file: AgentFile) => void;
}

/** Writes a new agent file into `dir`; resolves to its absolute path once it is closed. */
export async function createAgentFile(
  dir: string,
  partialConfig: Partial<AgentConfig> = {},
  options: CreateAgentFileOptions = {},
): Promise<string> {
  const config = agentConfig(partialConfig);
  const path = join(dir, options.fileName ?? `${config.name}.agt`);
  if (!options.seed) {
    await createOnWorker({ path, config, version: options.version, files: options.files, sql: options.sql });
    return path;
  }
  const file = AgentFile.create(path, config, { version: options.version });
  try {
    for (const [name, text] of Object.entries(options.files ?? {})) file.files.write(name, text);
    for (const statement of options.sql ?? []) file.raw.exec(statement);
    options.seed(file);
  } finally {
    await file.close();
  }
  return path;
}

// The test build runs JavaScript; from the sources (tsx), Node 20 applies no loader to a worker's entry
// module, so the worker starts from a line that registers tsx.
const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './agent-file-worker.ts' : './agent-file-worker.js', import.meta.url);
let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, { done: () => void; fail: (error: Error) => void }>();

function startWorker(): Worker {
  // The process's flags but `--input-type` (a process started with `-e` has it; a worker refuses it).
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--input-type'));
  const started = fromSources
    ? new Worker(
        `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(WORKER_URL.href)});`,
        { eval: true, execArgv },
      )
    : new Worker(WORKER_URL, { execArgv });
  started.unref(); // referenced only while a file is being made
  started.on('message', ({ id, error }: CreateReply) => {
    const waiter = waiting.get(id);
    waiting.delete(id);
    if (waiting.size === 0) started.unref();
    if (!error) return waiter?.done();
    waiter?.fail(Object.assign(new Error(error.message), { name: error.name }, error.props));
  });
  const failAll = (error: Error) => {
    if (worker === started) worker = undefined;
    for (const waiter of waiting.values()) waiter.fail(error);
    waiting.clear();
  };
  started.on('error', failAll);
  started.once('exit', (code) => failAll(new Error(`agent file worker exited (${code})`)));
  return started;
}

function createOnWorker(request: Omit<CreateRequest, 'id'>): Promise<void> {
  worker ??= startWorker();
  const id = nextId++;
  worker.ref();
  return new Promise<void>((done, fail) => {
    waiting.set(id, { done, fail });
    worker!.postMessage({ id, ...request });
  });
}

/** Writes an agent file into `dir` (`files` stored in it) and loads it through `POST /agents/load`; its id. */
export async function loadNewAgent(
  d: { request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> },
  dir: string,
  config: Partial<AgentConfig> = {},
  files: Record<string, string> = {},
): Promise<string> {
  const path = await createAgentFile(dir, config, { files });
  const res = await d.request('POST', '/agents/load', { filePath: path });
  if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
