/**
 * Test helpers for the mcp extension: paths of the real MCP servers from npm (run from node_modules),
 * the fixture server packed as a tarball (installed offline through POST /mcp/packages), a free port
 * for server-everything's Streamable HTTP mode, loading an agent once its servers are connected, and waiting on
 * a process to be gone.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { AgentConfig } from '@agt/contracts';
import { createAgentFile } from './agent-file.js';
import { type DaemonClient, ROOT } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const MEMORY = join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const FIXTURE_DIR = join(ROOT, 'test/fixtures/mcp/fixture-server');
export const FIXTURE_PACKAGE = 'agt-fixture-mcp-server';

/** The dependency-free files server the sandbox tests install (test/fixtures/mcp/files-server). */
export const FILES_DIR = join(ROOT, 'test/fixtures/mcp/files-server');
export const FILES_PACKAGE = 'agt-fixture-files-server';
/** The URL-elicitation fixture server (test/fixtures/mcp/url-elicit-server.mjs) as the owner's registration. */
export const LINKER = {
  name: 'linker',
  type: 'command',
  command: process.execPath,
  args: [join(ROOT, 'test/fixtures/mcp/url-elicit-server.mjs')],
};

/** `npm pack` of a fixture server (default: the fixture server) into `dir`; the tarball's path. */
export function packFixture(dir: string, fixture = FIXTURE_DIR): string {
  const out = execFileSync('npm', ['pack', fixture, '--pack-destination', dir, '--json', '--loglevel=error'], {
    encoding: 'utf8',
  });
  const [info] = JSON.parse(out) as Array<{ filename: string }>;
  return join(dir, info!.filename);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * server-everything over HTTP on a free port (`streamableHttp`: `/mcp`; `sse`, the older HTTP+SSE
 * transport: `/sse`); resolves once it listens.
 */
export async function startEverythingHttp(
  t: Teardown,
  mode: 'streamableHttp' | 'sse' = 'streamableHttp',
  port?: number,
): Promise<{ url: string; child: ChildProcess; port: number }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let err = '';
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server-everything HTTP did not start: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      if (/listening on port|running on port/.test(err)) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', () => fail(new Error(`server-everything HTTP exited: ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`, child, port };
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Host pids whose command line holds `needle` (a sandboxed process seen from the host). */
export function pidsRunning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').includes(needle))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Waits (bounded) for every pid to be gone; returns the ones still alive. */
export async function gone(pids: number[], ms = 10_000): Promise<number[]> {
  const until = Date.now() + ms;
  while (Date.now() < until && pids.some(alive)) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(alive);
}

/**
 * Creates an agent in `dir` that uses the owner-registered stdio servers `servers`, loads it, and resolves
 * with its id once every one of them is connected (a failsafe after 60 s).
 */
export async function loadWithServers(
  d: DaemonClient,
  dir: string,
  model: AgentConfig['model'],
  servers: string[],
): Promise<string> {
  const filePath = await createAgentFile(dir, {
    model,
    mcp: { servers: servers.map((name) => ({ name, transport: 'stdio' as const })) },
  });
  const loaded = await d.request('POST', '/agents/load', { filePath });
  if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
  const agentId: string = loaded.body.id;
  const end = Date.now() + 60_000;
  for (;;) {
    const listed = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as Array<{ status: string }>;
    if (listed.every((s) => s.status === 'connected')) return agentId;
    if (Date.now() > end) throw new Error(`failsafe: the servers did not connect: ${JSON.stringify(listed)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
