/**
 * A stdio MCP server in the calling agent's command sandbox with the daemon as an ordinary user (uid 65534,
 * started from root): bubblewrap's user namespace, no uid switch. The built daemon installs the files fixture
 * (npm as that user, HOME its own) and runs it for an agent under `sandbox` and `exposeWorkFolder`: its one
 * root is `file:///work`, a file it writes is in the agent's work folder on the host, the data directory's
 * files are not there, and after the agent unloads nothing it started is left. The same as root:
 * test/mcp-sandbox.test.ts. On the way: an agent file that user may not read is a 422, not a 500.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { alive, FILES_DIR, FILES_PACKAGE, gone, packFixture, pidsRunning } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';

const USER = 65534;
const root = process.getuid?.() === 0;
const base = tempDir(t, 'agt-mcp-sandbox-user-');
const [dataDir, home, agents] = ['data', 'home', 'agents'].map((name) => join(base, name)) as [string, string, string];
for (const dir of [base, dataDir, home, agents]) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (root) chownSync(dir, USER, USER);
}

/** The daemon's own sandbox probe, run as that user (`undefined` when it cannot run at all). */
function probeAsUser(): { available: boolean; mode?: string; reason?: string } | undefined {
  // (`env -u NODE_OPTIONS`: tap's process-info hook, which the child could not write as that user)
  const args = [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', 'env', '-u', 'NODE_OPTIONS'];
  const node = [process.execPath, '--import=tsx', '--conditions=agt-source', 'test/fixtures/command-sandbox/probe.ts'];
  try {
    const out = execFileSync('setpriv', [...args, ...node], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home },
      encoding: 'utf8',
    });
    return JSON.parse(out.trim().split('\n').at(-1)!);
  } catch {
    return undefined;
  }
}

const state = root ? probeAsUser() : undefined;
const skip = !root
  ? 'the daemon is switched to uid 65534, which needs root (as an ordinary user: test/mcp-sandbox.test.ts)'
  : !state
    ? `the sandbox probe could not run as uid ${USER}`
    : !state.available
      ? `no sandbox can be made as uid ${USER} here: ${state.reason}`
      : false;

t.test(`as uid ${USER}: a sandboxed npm server with the work folder as its root`, { skip }, async (t) => {
  t.equal(state?.mode, 'user', "bubblewrap's user namespace");
  const driver = await startToolDriver(t);
  const d = await runDaemon(t, {
    dataDir,
    uid: USER,
    env: { HOME: home, TMPDIR: home },
    settings: {
      providers: [driver.provider],
      mcpServers: [{ name: 'files', type: 'npm', npmPackage: FILES_PACKAGE, sandbox: true, exposeWorkFolder: true }],
    },
  });
  chownSync(join(dataDir, 'settings.json'), USER, USER);
  t.ok(d.url, `the daemon runs: ${d.stderr()}`);
  const runsAs = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${d.child.pid}/status`, 'utf8'))?.[1]);
  t.equal(runsAs, USER, `the daemon runs as uid ${runsAs}`);

  // Packed where that user can read it: npm runs as the daemon's user.
  const packs = join(home, 'packs');
  mkdirSync(packs, { mode: 0o700 });
  const tarball = packFixture(packs, FILES_DIR);
  chownSync(packs, USER, USER);
  chownSync(tarball, USER, USER);
  chmodSync(tarball, 0o600);
  const installed = await d.request('POST', '/mcp/packages', { package: tarball });
  t.equal(installed.status, 201, JSON.stringify(installed.body));

  // Written here as root (0600): the daemon's user cannot read it until it owns it (and what sqlite left beside).
  const filePath = await createAgentFile(agents, {
    model: driver.model,
    mcp: { servers: [{ name: 'files', transport: 'stdio' }] },
  });
  const unreadable = await d.request('POST', '/agents/load', { filePath });
  t.equal(unreadable.status, 422, 'a file the daemon may not read is refused, not a 500');
  t.match(unreadable.body, { code: 'load_failed', reason: 'not_a_file', error: /cannot read: EACCES/ });
  for (const file of readdirSync(agents)) chownSync(join(agents, file), USER, USER);
  const loaded = await d.request('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200, JSON.stringify(loaded.body));
  const agentId: string = loaded.body.id;
  const server = async () =>
    ((await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as Array<{ status: string; pid: number }>)[0]!;
  const end = Date.now() + 20_000;
  while ((await server()).status !== 'connected') {
    if (Date.now() > end) throw new Error(`failsafe: the server did not connect: ${JSON.stringify(await server())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const work = join(dataDir, 'sandbox/work', `agent-${agentId}`);
  const call = (tool: string, args: Record<string, unknown> = {}) => driver.run(d, agentId, `mcp_files_${tool}`, args);

  t.same(JSON.parse(await call('roots')), [{ uri: 'file:///work', name: 'work folder' }], 'its one root is /work');

  t.match(await call('write', { name: 'hello.txt', text: 'from the sandbox' }), /wrote \/work\/hello\.txt/);
  t.equal(readFileSync(join(work, 'hello.txt'), 'utf8'), 'from the sandbox', 'in the agent work folder on the host');

  for (const file of ['settings.json', 'daemon-token']) {
    t.ok(existsSync(join(dataDir, file)), `${file} exists on the host`);
    t.match(await call('read', { path: join(dataDir, file) }), /ENOENT/, `${file} is not there inside`);
  }
  const { uid } = JSON.parse(await call('whoami')) as { uid: number };
  t.equal(uid, USER, "inside, the daemon's uid (its user namespace maps only that one)");

  const seconds = `${1000 + Math.floor(Math.random() * 1000)}.${process.pid}`;
  await call('spawn', { seconds });
  const sleepers = pidsRunning(`sleep ${seconds}`);
  t.equal(sleepers.length, 1, 'the child it started in a session of its own runs');
  const serverPids = pidsRunning(`/agt/mcp-servers/node_modules/${FILES_PACKAGE}/server.mjs`);
  t.ok(serverPids.length > 0, 'the server runs');
  const sandbox = (await server()).pid;
  t.ok(alive(sandbox), 'its sandbox (the pid the API shows) runs');
  t.equal((await d.request('POST', `/agents/${agentId}/unload`)).status, 200);
  t.same(await gone([sandbox, ...serverPids, ...sleepers]), [], 'after unload, all gone');
});
