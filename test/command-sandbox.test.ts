/**
 * Agents' host commands run in a bubblewrap sandbox each. The isolation cases are in
 * fixtures/command-sandbox/scenarios.ts and run twice when this file runs as root: here (the root
 * sandbox: an own uid per agent) and in a child as uid 65534 (the ordinary user's sandbox: bwrap's
 * user namespace). Plus: where no sandbox can be made, commands are refused unless allowed; agent
 * files are created 0600 and the data directory 0700.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { sandboxCommand } from '../kernel/runtime/sandbox/bwrap-args.js';
import { DEFAULT_COMMAND_LIMITS } from '../kernel/runtime/sandbox/command-limits.js';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { folderSize } from '../kernel/runtime/sandbox/folder-size.js';
import { SettingsStore } from '../kernel/settings.js';
import { agentConfig, createAgentFile } from './helpers/agent-file.js';
import { ROOT, tempDir } from './helpers/daemon.js';
import { sandboxScenarios } from './fixtures/command-sandbox/scenarios.js';

const root = process.getuid?.() === 0;
const bwrap = ['/usr/local/bin/bwrap', '/usr/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));
const noBwrap = bwrap ? false : 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)';

// Probed in a folder of its own: a host that cannot make a sandbox skips the isolation cases, saying why.
const probeDir = tempDir(t, 'agt-sandbox-probe-');
const probe = bwrap ? await new HostCommandRunner({ dataDir: probeDir }).probe() : undefined;
const noSandbox =
  noBwrap ||
  (probe?.available ? false : `no sandbox can be made here: ${probe && !probe.available ? probe.reason : ''}`);

t.test(root ? 'isolation as root' : 'isolation as an ordinary user', { skip: noSandbox }, async (t) => {
  await sandboxScenarios(t, tempDir(t, 'agt-sandbox-'));
});

t.test(
  'isolation as an ordinary user (uid 65534, from root)',
  { skip: noSandbox || (root ? false : 'the test runs as an ordinary user already') },
  async (t) => {
    // HOME and TMPDIR the child's user owns (its data dir and tsx's cache go there).
    const home = mkdtempSync(join(tmpdir(), 'agt-sandbox-home-'));
    chownSync(home, 65534, 65534);
    chmodSync(home, 0o700);
    t.teardown(() => rmSync(home, { recursive: true, force: true }));
    const child = join(ROOT, 'test/fixtures/command-sandbox/as-user.ts');
    // (`env -u NODE_OPTIONS`: tap's process-info hook, which the child could not write as that user)
    const args = [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      'env',
      '-u',
      'NODE_OPTIONS',
      process.execPath,
      '--import=tsx',
      '--conditions=agt-source',
      child,
    ];
    await t.spawn(
      'setpriv',
      args,
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home } },
      'as uid 65534',
    );
  },
);

t.test("the daemon's private paths under a system folder are hidden", async (t) => {
  const plan = {
    tools: { bwrap: 'bwrap', prlimit: 'prlimit' },
    mode: 'user' as const,
    workFolder: '/w',
    limits: DEFAULT_COMMAND_LIMITS,
    command: 'true',
  };
  const { argv, options } = sandboxCommand({ ...plan, privatePaths: ['/opt/agt-data', '/home/me/agents'] });
  t.ok(options.join(' ').includes('--tmpfs /opt/agt-data'), 'under /opt: covered');
  t.notOk([...argv, ...options].includes('/home/me/agents'), 'under /home: not mounted at all');
  t.same(argv.slice(-4), ['--', '/bin/sh', '-c', 'true'], 'the command is only the last argument');
  t.notOk(
    argv.some((arg) => arg === '/w' || arg.startsWith('/opt/agt-data')),
    'host paths are in the options bwrap reads on a pipe, not in its argv',
  );
  // For real where /opt can be written (root): a data directory there is empty inside.
  if (!root || noSandbox || !existsSync('/opt')) return;
  const privateDir = mkdtempSync('/opt/agt-private-');
  t.teardown(() => rmSync(privateDir, { recursive: true, force: true }));
  chmodSync(privateDir, 0o755);
  writeFileSync(join(privateDir, 'secret'), 'x', { mode: 0o644 });
  const runner = new HostCommandRunner({ dataDir: tempDir(t, 'agt-sandbox-'), privatePaths: () => [privateDir] });
  const out = await runner.run({
    agentId: 'agt-hide',
    command: `ls -A ${privateDir}; echo end`,
    stdin: '',
    trigger: 'test',
  });
  t.equal(out.stdout, 'end\n', 'a world-readable file there is not visible');
});

t.test('without a sandbox commands are refused unless the agent may run them unsandboxed', async (t) => {
  const dataDir = tempDir(t, 'agt-sandbox-');
  const limits = { ...DEFAULT_COMMAND_LIMITS, fileSizeMb: 1 };
  const runner = new HostCommandRunner({ dataDir, sandbox: false, limits: () => limits });
  const call = {
    agentId: 'agt-plain',
    command: 'cat; echo; pwd; head -c 3000000 /dev/zero > big; echo "exit $?"',
    stdin: '{"n":1}',
    trigger: 'test',
  };
  await t.rejects(runner.run(call), {
    code: 'unavailable',
    message: /cannot make.*agentCeiling\.allowUnsandboxedCommands.*allow_unsandboxed_commands/,
  });
  const out = await runner.run({ ...call, allowUnsandboxed: true });
  t.equal(out.boundary, 'unsandboxed');
  const [stdin, cwd, exit] = out.stdout.trim().split('\n');
  t.equal(stdin + cwd, `{"n":1}${runner.workFolder('agt-plain')}`, "in the agent's work folder");
  t.equal(exit, 'exit 153', 'the file size limit holds without a sandbox too');
  t.equal(statSync(runner.workFolder('agt-plain')).mode & 0o777, 0o700);
  t.same(
    (await runner.runHost({ agentId: 'agt-plain', command: 'sleep 30', timeoutMs: 200 }, true)).exitCode,
    124,
    'host tier: 124 at the limit',
  );
  await t.rejects(
    runner.run({ ...call, agentId: '../x' }),
    { code: 'bad_request' },
    'an agent id never names another folder',
  );
  // The work folder's bound holds without a sandbox too: it holds a 1 MB file now.
  limits.workBytes = 1024 * 1024;
  await t.rejects(
    runner.run({ ...call, allowUnsandboxed: true }),
    { code: 'work_folder_full' },
    'over 1 MB of work folder: refused',
  );
});

t.test("a work folder's measure: du's count, links never followed, bounded", async (t) => {
  const dir = tempDir(t, 'agt-folder-size-');
  mkdirSync(join(dir, 'a/b'), { recursive: true });
  writeFileSync(join(dir, 'a/b/data'), Buffer.alloc(100_000, 1));
  symlinkSync(dir, join(dir, 'a/loop'));
  symlinkSync('/usr', join(dir, 'usr'));
  const du = Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);
  t.same(
    await folderSize(dir, 2 ** 40, 1000),
    { bytes: du, entries: 6, complete: true, tooManyEntries: false },
    'what du -s counts; a link to its own folder or to /usr is one entry',
  );
  t.match(await folderSize(dir, 50_000, 1000), { complete: false, tooManyEntries: false }, 'stops once past the bound');
  t.match(
    await folderSize(dir, 2 ** 40, 3),
    { entries: 3, complete: false, tooManyEntries: true },
    'stops at the entry limit',
  );
  t.same(
    await folderSize(join(dir, 'none'), 1, 10),
    { bytes: 0, entries: 0, complete: true, tooManyEntries: false },
    'a folder not made yet uses nothing',
  );
});

t.test('agent files are created 0600, the data directory 0700', async (t) => {
  const dir = tempDir(t, 'agt-modes-');
  const current = await createAgentFile(dir);
  t.equal(statSync(current).mode & 0o777, 0o600, 'a new agent file');
  const old = await createAgentFile(dir, {}, { version: 1, fileName: 'old.agt' });
  t.equal(statSync(old).mode & 0o777, 0o600, 'a file at an older schema');
  const file = AgentFile.create(join(dir, 'open.agt'), agentConfig());
  t.teardown(() => file.close());
  file.finishCreation();
  file.logs.write({ level: 'info', origin: 'kernel', event: 'x', message: 'y' });
  t.equal(statSync(join(dir, 'open.agt-wal')).mode & 0o777, 0o600, 'its WAL');
  const dataDir = join(dir, 'fresh', 'agt');
  new SettingsStore(join(dataDir, 'settings.json'));
  t.equal(statSync(dataDir).mode & 0o777, 0o700, 'a new data directory');
});
