/**
 * A stdio MCP server run inside the calling agent's command sandbox (docs/mcp.md "Sandboxed servers"), black
 * box: the built daemon installs a real npm package (test/fixtures/mcp/files-server, packed and installed
 * offline through POST /mcp/packages) and runs it for an agent under a registration with `sandbox` and
 * `exposeWorkFolder`. Its one root is `file:///work`; a file it writes there is in the agent's work folder on
 * the host; what lies outside (the data directory, another agent's work folder) is simply not there; as root
 * it runs as the agent's own uid; after the agent unloads, nothing it started is left.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { alive, FILES_DIR, FILES_PACKAGE, gone, packFixture, pidsRunning } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';

const root = process.getuid?.() === 0;
const bwrap = ['/usr/local/bin/bwrap', '/usr/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));
// Probed as the daemon probes it, in a folder of its own: a host that cannot make a sandbox skips, saying why.
const probe = bwrap
  ? await new HostCommandRunner({ dataDir: tempDir(t, 'agt-mcp-sandbox-probe-') }).probe()
  : undefined;
const skip = !bwrap
  ? 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)'
  : probe && !probe.available
    ? `no sandbox can be made here: ${probe.reason}`
    : false;

t.test('a sandboxed npm server with the work folder as its root', { skip }, async (t) => {
  const driver = await startToolDriver(t);
  const d = await runDaemon(t, {
    settings: {
      providers: [driver.provider],
      mcpServers: [{ name: 'files', type: 'npm', npmPackage: FILES_PACKAGE, sandbox: true, exposeWorkFolder: true }],
    },
  });
  const installed = await d.request('POST', '/mcp/packages', { package: packFixture(tempDir(t), FILES_DIR) });
  t.equal(installed.status, 201, JSON.stringify(installed.body));

  // Another agent's work folder, and the data directory's own files: neither may be reachable.
  const other = join(d.dataDir, 'sandbox/work/agent-someone-else');
  mkdirSync(other, { recursive: true, mode: 0o700 });
  writeFileSync(join(other, 'secret.txt'), 'not for the server');

  const filePath = await createAgentFile(tempDir(t, 'agt-mcp-sandbox-'), {
    model: driver.model,
    mcp: { servers: [{ name: 'files', transport: 'stdio' }] },
  });
  const loaded = await d.request('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200, JSON.stringify(loaded.body));
  const agentId: string = loaded.body.id;
  const work = join(d.dataDir, 'sandbox/work', `agent-${agentId}`);
  const server = async () =>
    ((await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as Array<Record<string, any>>).find(
      (s) => s.name === 'files',
    )!;
  const end = Date.now() + 20_000;
  while ((await server()).status !== 'connected') {
    if (Date.now() > end) throw new Error(`failsafe: the server did not connect: ${JSON.stringify(await server())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const call = (tool: string, args: Record<string, unknown> = {}) => driver.run(d, agentId, `mcp_files_${tool}`, args);

  t.test('its one root is /work, the path it sees', async (t) => {
    t.same(JSON.parse(await call('roots')), [{ uri: 'file:///work', name: 'work folder' }]);
  });

  t.test('a file it writes under its root is in the agent work folder on the host', async (t) => {
    t.match(await call('write', { name: 'hello.txt', text: 'from the sandbox' }), /wrote \/work\/hello\.txt/);
    t.equal(readFileSync(join(work, 'hello.txt'), 'utf8'), 'from the sandbox');
    t.ok(JSON.parse(await call('list')).includes('hello.txt'));
    t.equal(await call('read', { path: '/work/hello.txt' }), 'from the sandbox', 'what is there can be read');
  });

  t.test('what lies outside is not there', async (t) => {
    t.match(await call('read', { path: join(other, 'secret.txt') }), /ENOENT/, "another agent's work folder");
    t.match(await call('read', { path: join(d.dataDir, 'settings.json') }), /ENOENT/, 'the data directory');
    t.ok(existsSync(join(d.dataDir, 'settings.json')), '(which exists on the host)');
  });

  t.test(root ? "it runs as the agent's own uid" : "it runs as the daemon's user", async (t) => {
    const { uid } = JSON.parse(await call('whoami')) as { uid: number };
    const owner = statSync(join(work, 'hello.txt')).uid;
    if (root) {
      t.not(uid, 0, 'not root');
      t.ok(uid >= 1_900_000_000, `an agent uid (${uid})`);
      t.equal(owner, uid, 'the file it wrote is the agent uid on the host');
    } else t.equal(owner, process.getuid?.());
  });

  t.test('unloading the agent leaves nothing it started behind', async (t) => {
    const seconds = `${1000 + Math.floor(Math.random() * 1000)}.${process.pid}`;
    await call('spawn', { seconds });
    const sleepers = pidsRunning(`sleep ${seconds}`);
    t.equal(sleepers.length, 1, 'the child it started in a session of its own runs');
    const serverPids = pidsRunning(`/agt/mcp-servers/node_modules/${FILES_PACKAGE}/server.mjs`);
    t.ok(serverPids.length > 0, 'the server runs');
    const sandbox = (await server()).pid as number;
    t.ok(alive(sandbox), 'its sandbox (the pid the API shows) runs');
    t.equal((await d.request('POST', `/agents/${agentId}/unload`)).status, 200);
    t.same(await gone([sandbox, ...serverPids, ...sleepers]), [], 'all gone');
  });

  t.test('sandbox is refused for an http registration', async (t) => {
    const refused = await d.request('POST', '/mcp/servers', {
      name: 'remote',
      type: 'http',
      url: 'http://127.0.0.1:9/mcp',
      sandbox: true,
    });
    t.equal(refused.status, 400);
    t.match(refused.body, { code: 'bad_request', error: /sandbox/ });
  });
});
