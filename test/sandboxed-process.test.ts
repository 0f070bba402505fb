/**
 * Long-lived processes in an agent's command sandbox (the host runner's `spawnProcess`, behind
 * `ctx.agents.spawnSandboxed`): the mounts a caller asks for are refused when they hold the daemon's private
 * paths or touch the agents' work folders; where no sandbox can be made nothing starts; the kill of an agent's
 * processes takes everything they started; the program sees its mounts read-only, nothing of the data dir, and
 * no network but its loopback.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { sandboxMounts } from '../kernel/runtime/sandbox/sandboxed-process.js';
import { tempDir } from './helpers/daemon.js';

const bwrap = ['/usr/local/bin/bwrap', '/usr/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));
const probe = bwrap ? await new HostCommandRunner({ dataDir: tempDir(t, 'agt-spawn-probe-') }).probe() : undefined;
const noSandbox = !bwrap
  ? 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)'
  : probe && !probe.available
    ? `no sandbox can be made here: ${probe.reason}`
    : false;

t.test('mounts: refused around private paths and in the work folders, fine inside the data dir', async (t) => {
  const dataDir = tempDir(t, 'agt-spawn-mounts-');
  const sandboxRoot = join(dataDir, 'sandbox');
  const packages = join(dataDir, 'mcp-servers/node_modules');
  const work = join(sandboxRoot, 'work/agent-a');
  const tracked = join(tempDir(t, 'agt-spawn-tracked-'), 'agents');
  for (const dir of [packages, work, tracked]) mkdirSync(dir, { recursive: true });
  const mounts = (entries: Record<string, string>) => sandboxMounts(entries, [dataDir, tracked], sandboxRoot);
  t.same(mounts({ 'mcp-servers/node_modules': packages, 'bin/node': process.execPath }), [
    { source: packages, target: '/agt/mcp-servers/node_modules' },
    { source: process.execPath, target: '/agt/bin/node' },
  ]);
  const refused = { code: 'bad_request' };
  t.throws(() => mounts({ data: dataDir }), refused, 'the data directory');
  t.throws(() => mounts({ up: join(dataDir, '..') }), refused, 'a folder holding it');
  t.throws(() => mounts({ agents: join(tracked, '..') }), refused, 'a folder holding a tracked agents folder');
  t.throws(() => mounts({ work: work }), refused, "an agent's work folder");
  t.throws(() => mounts({ sandbox: sandboxRoot }), refused, 'the work folders');
  t.throws(() => mounts({ '../etc': packages }), refused, 'a path leaving /agt');
  t.throws(() => mounts({ 'a/../b': packages }), refused, 'a path with ..');
  t.throws(() => mounts({ '/abs': packages }), refused, 'an absolute path');
  t.throws(() => mounts({ x: 'relative/path' }), refused, 'a relative source');
  t.throws(() => mounts({ x: join(dataDir, 'missing') }), refused, 'a missing source');
});

t.test('where no sandbox can be made nothing starts', async (t) => {
  const runner = new HostCommandRunner({ dataDir: tempDir(t, 'agt-spawn-none-'), sandbox: false });
  await t.rejects(runner.spawnProcess('a', { command: '/bin/true' }), { code: 'unavailable' });
});

t.test('a process in the sandbox, killed with everything it started', { skip: noSandbox }, async (t) => {
  const dataDir = tempDir(t, 'agt-spawn-');
  writeFileSync(join(dataDir, 'secret.txt'), 'daemon only');
  const lib = tempDir(t, 'agt-spawn-lib-');
  writeFileSync(join(lib, 'note.txt'), 'mounted\n');
  // Readable to the agent's uid, as an installed package folder is (mkdtemp makes it 0700).
  chmodSync(lib, 0o755);
  const runner = new HostCommandRunner({ dataDir });
  t.teardown(() => runner.killAll());
  const script = [
    'cat /agt/lib/note.txt',
    `cat ${join(dataDir, 'secret.txt')} 2>/dev/null || echo no-secret`,
    'touch /agt/lib/new 2>/dev/null || echo read-only',
    'echo "$HOME $AGT_AGENT_ID $EXTRA"',
    // Interfaces of its network namespace: only the loopback.
    'echo "interfaces $(grep -c : /proc/net/dev)"',
    'setsid sleep 1000 & echo ready; read line',
  ].join('; ');
  const child = await runner.spawnProcess('agent-one', {
    command: '/bin/sh',
    args: ['-c', script],
    env: { EXTRA: 'given' },
    mounts: { lib },
  });
  let out = '';
  await new Promise<void>((done) =>
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('ready')) done();
    }),
  );
  t.same(out.trim().split('\n'), [
    'mounted',
    'no-secret',
    'read-only',
    '/work agent-one given',
    'interfaces 1',
    'ready',
  ]);
  runner.killAgent('agent-one');
  // The setsid sleep holds stdout: the pipes close, and `exited` settles, only once it is gone too.
  t.match(await child.exited, { code: 137 }, 'the sandbox ended by the kill, everything in it gone');
});
