import t from 'tap';
import { LambdaHost, parseLambdaRef } from '../kernel/runtime/sandbox/lambda-runner.js';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { tempDir } from './helpers/daemon.js';
import { wireDaemon } from './helpers/wire-daemon.js';

const SOURCE = `
interface Ev { n: number }
export function double(e: Ev): { double: number; env: string } {
  console.log('seen', e.n);
  return { double: e.n * 2, env: [typeof process, typeof require, typeof fetch, typeof setTimeout].join(',') };
}
export async function later(e: Ev) { return (await Promise.resolve(e.n)) + 1; }
export function spin() { for (;;) {} }
let calls = 0;
export function counter() { return ++calls; }
export function fails() { throw new Error('lambda says no'); }
export function stuck() {}
export function busy(e: { n: number; ms: number }) { const end = Date.now() + e.ms; while (Date.now() < end) {} return e.n; }
export function bomb() { const a: string[] = []; for (;;) a.push('x'.repeat(100_000) + a.length); }
export function big() { return new ArrayBuffer(1e9).byteLength; }
`;

t.test('lambda: TypeScript source, JSON in and out, no host objects', async (t) => {
  const host = new LambdaHost();
  t.teardown(() => host.close());
  const ref = parseLambdaRef('lib/hooks.ts:double');
  const out = await host.run({ ref, source: SOURCE, event: { n: 21 } });
  t.same(out.result, { double: 42, env: 'undefined,undefined,undefined,undefined' });
  t.same(out.logs, ['log: seen 21']);
  t.equal((await host.run({ ref: parseLambdaRef('lib/hooks.ts:later'), source: SOURCE, event: { n: 1 } })).result, 2);
});

t.test('lambda: a loop that never ends is killed at its time limit, and the host keeps working', async (t) => {
  const host = new LambdaHost();
  t.teardown(() => host.close());
  await t.rejects(host.run({ ref: parseLambdaRef('lib/hooks.ts:spin'), source: SOURCE, event: null, timeoutMs: 200 }), {
    code: 'timeout',
  });
  const again = await host.run({ ref: parseLambdaRef('lib/hooks.ts:double'), source: SOURCE, event: { n: 2 } });
  t.equal((again.result as { double: number }).double, 4);
});

t.test("lambda: each call's time limit starts when it runs, not while it waits behind others", async (t) => {
  // A generous watchdog grace: on a loaded machine the worker may be descheduled, and only the limit's own
  // accounting is under test here.
  const host = new LambdaHost({ watchdogGraceMs: 2_000 });
  t.teardown(() => host.close());
  // Four calls of 400 ms each, 1200 ms limit: the last waits ~1200 ms before it runs, so a deadline counted
  // from the moment it was sent would kill it (and, before, every call queued with it); counted from when
  // it runs, each has 800 ms to spare.
  const busy = parseLambdaRef('lib/hooks.ts:busy');
  const calls = [1, 2, 3, 4].map((n) =>
    host.run({ ref: busy, source: SOURCE, event: { n, ms: 400 }, timeoutMs: 1_200 }),
  );
  t.same(
    (await Promise.all(calls)).map((out) => out.result),
    [1, 2, 3, 4],
    'every call finished within its own limit',
  );
  const spin = parseLambdaRef('lib/hooks.ts:spin');
  const spins = await Promise.allSettled(
    [1, 2, 3].map(() => host.run({ ref: spin, source: SOURCE, event: null, timeoutMs: 150 })),
  );
  t.ok(
    spins.every((r) => r.status === 'rejected' && r.reason.code === 'timeout' && /was stopped/.test(r.reason.message)),
    'spins are stopped by their own limit, one by one',
  );
});

t.test('lambda: a call that never yields is cut off alone; the calls queued behind it still run', async (t) => {
  const host = new LambdaHost({
    workerUrl: new URL('./fixtures/runtime/stuck-worker.mjs', import.meta.url),
    watchdogGraceMs: 100,
  });
  t.teardown(() => host.close());
  const double = (n: number) => host.run({ ref: parseLambdaRef('lib/hooks.ts:double'), source: SOURCE, event: { n } });
  const results = await Promise.allSettled([
    double(1),
    host.run({ ref: parseLambdaRef('lib/hooks.ts:stuck'), source: SOURCE, event: null, timeoutMs: 100 }),
    double(2),
    double(3),
  ]);
  t.match(results[1], { status: 'rejected', reason: { code: 'timeout', message: /sandbox was terminated/ } });
  t.same(
    [results[0], results[2], results[3]].map((r) =>
      r.status === 'fulfilled' ? (r.value.result as { double: number }).double : r.reason.message,
    ),
    [2, 4, 6],
  );
});

t.test('lambda: an allocation bomb fails fast with out_of_memory; the host keeps working', async (t) => {
  const host = new LambdaHost();
  t.teardown(() => host.close());
  // Without a working memory limit this runs for tens of seconds, into the 20 s time limit.
  await t.rejects(
    host.run({ ref: parseLambdaRef('lib/hooks.ts:bomb'), source: SOURCE, event: null, timeoutMs: 20_000 }),
    { code: 'out_of_memory', message: /memory limit of 32 MB/ },
  );
  await t.rejects(
    host.run({ ref: parseLambdaRef('lib/hooks.ts:big'), source: SOURCE, event: null, timeoutMs: 20_000 }),
    { code: 'out_of_memory' },
  );
  t.equal(
    (await host.run({ ref: parseLambdaRef('lib/hooks.ts:counter'), source: SOURCE, event: null, warm: true })).result,
    1,
  );
  await t.rejects(
    host.run({ ref: parseLambdaRef('lib/hooks.ts:bomb'), source: SOURCE, event: null, warm: true, timeoutMs: 20_000 }),
    { code: 'out_of_memory' },
  );
  t.equal(
    (await host.run({ ref: parseLambdaRef('lib/hooks.ts:counter'), source: SOURCE, event: null, warm: true })).result,
    2,
    "a warm context survives another lambda's failure",
  );
});

t.test('lambda: warm keeps module state, cold starts fresh; errors are coded', async (t) => {
  const host = new LambdaHost();
  t.teardown(() => host.close());
  const ref = parseLambdaRef('lib/hooks.ts:counter');
  t.equal((await host.run({ ref, source: SOURCE, event: null, warm: true })).result, 1);
  t.equal((await host.run({ ref, source: SOURCE, event: null, warm: true })).result, 2);
  t.equal((await host.run({ ref, source: SOURCE, event: null })).result, 1);
  await t.rejects(host.run({ ref: parseLambdaRef('lib/hooks.ts:fails'), source: SOURCE, event: null }), {
    code: 'lambda_failed',
    message: /lambda says no/,
  });
  await t.rejects(host.run({ ref: parseLambdaRef('lib/hooks.ts:missing'), source: SOURCE, event: null }), {
    code: 'bad_request',
  });
  await t.rejects(host.run({ ref: parseLambdaRef('lib/bad.ts:f'), source: 'export function f( {', event: null }), {
    code: 'bad_request',
    message: /does not compile/,
  });
  t.throws(() => parseLambdaRef('no-function'), { code: 'bad_request' });
});

// Agents' commands in a runner of their own (the isolation cases are in command-sandbox.test.ts).
const commands = new HostCommandRunner({ dataDir: tempDir(t, 'agt-commands-') });
const sandbox = await commands.probe();

t.test('command: event on stdin, minimal env, the work folder as cwd, killed at the limit', async (t) => {
  // Secrets in the daemon's own environment must not reach the command.
  const saved = { token: process.env.AGT_DAEMON_TOKEN, key: process.env.OPENAI_API_KEY };
  process.env.AGT_DAEMON_TOKEN = 'secret-token';
  process.env.OPENAI_API_KEY = 'sk-secret';
  t.teardown(() => {
    for (const [name, value] of [
      ['AGT_DAEMON_TOKEN', saved.token],
      ['OPENAI_API_KEY', saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  const out = await commands.run({
    command: 'cat; echo; echo "token=${AGT_DAEMON_TOKEN:-none} key=${OPENAI_API_KEY:-none} agent=$AGT_AGENT_ID"; pwd',
    stdin: JSON.stringify({ hello: 'world' }),
    agentId: 'a1',
    trigger: 'on_timer',
    allowUnsandboxed: true,
  });
  const [stdin, envLine, cwd] = out.stdout.trim().split('\n');
  t.same(JSON.parse(stdin!), { hello: 'world' });
  t.equal(envLine, 'token=none key=none agent=a1');
  t.equal(cwd, sandbox.available ? '/work' : commands.workFolder('a1'));
  t.equal(out.exitCode, 0);
  const slow = await commands.run({
    command: 'sleep 30 & sleep 30',
    stdin: '',
    agentId: 'a1',
    trigger: 'on_timer',
    timeoutMs: 200,
    allowUnsandboxed: true,
  });
  t.equal(slow.timedOut, true);
});

t.test(
  'command boundary: no daemon secrets, no network; a harmless command still works',
  { skip: sandbox.available ? false : `no sandbox can be made here: ${sandbox.available ? '' : sandbox.reason}` },
  async (t) => {
    // The built daemon without extensions: the host's command runner (a compute extension would run
    // commands elsewhere) is what this test is about.
    const h = await wireDaemon(t, { extensions: { extensions: [] } });
    const id = await h.agent();
    const port = new URL(h.d.url).port;
    const run = async (command: string) => {
      const res = await h.d.request('POST', `/agents/${id}/trigger`, {
        type: 'timer',
        data: { n: 7 },
        scope: 'system',
        command,
      });
      t.equal(res.status, 202);
      return (await h.ended(res.body.turnId)) as { event_type: string; payload: any };
    };
    const echo = await run('cat');
    t.equal(echo.event_type, 'turn.completed', 'a harmless command works');
    t.match(JSON.parse(JSON.parse(echo.payload.text).stdout), { trigger: 'on_timer', event: { data: { n: 7 } } });
    const whoami = await run('id -u; pwd; stat -c %u .');
    const [uid, cwd, owner] = JSON.parse(whoami.payload.text).stdout.trim().split('\n');
    if (process.getuid?.() === 0)
      t.ok(Number(uid) >= 1_900_000_000, `a root daemon runs it as the agent's own uid (${uid})`);
    else t.equal(uid, String(process.getuid?.()), "as the daemon's user in a user namespace");
    t.equal(cwd, '/work');
    t.equal(owner, uid, 'in a work folder it owns');

    const token = await run(`cat ${h.d.dataDir}/daemon-token`);
    t.equal(token.event_type, 'agent.error', 'the daemon token cannot be read');
    t.equal(token.payload.code, 'command_failed');
    t.match(token.payload.message, /No such file/, 'the data directory is not even there');
    t.notMatch(token.payload.message, h.d.token);

    // (tap injects NODE_OPTIONS into every child it sees spawned; the daemon itself passes none)
    const connect = `NODE_OPTIONS= ${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.error('NETERR:' + e.code); process.exit(3) })"`;
    const net = await run(connect);
    t.equal(net.event_type, 'agent.error', "the daemon's port cannot be reached");
    t.match(net.payload.message, /NETERR:E[A-Z]+/, 'node ran and its connection failed');
    const logs = (await h.d.request('GET', `/agents/${id}/logs?origin=trigger`)).body.logs;
    t.ok(
      logs.some((l: any) => l.level === 'error' && /NETERR/.test(l.message)),
      'failures are logged to the agent',
    );

    // The owner's settings `commandLimits` reach the next command.
    t.equal((await h.d.request('PATCH', '/settings', { commandLimits: { fileSizeMb: 1 } })).status, 200);
    const big = await run('head -c 3000000 /dev/zero > big; echo "exit $?"; stat -c %s big');
    t.equal(JSON.parse(big.payload.text).stdout, 'exit 153\n1048576\n', 'a 1 MB file size limit from the settings');
    t.equal(
      (await h.d.request('PATCH', '/settings', { commandLimits: { fileSizeMb: 0 } })).status,
      400,
      'bounds are checked',
    );

    // The work folder's bound from the settings (it holds `big`, 1 MB, already): past it, the next command fails with
    // work_folder_full.
    t.equal(
      (await h.d.request('PATCH', '/settings', { commandLimits: { fileSizeMb: 4, workBytes: 2 * 1024 * 1024 } }))
        .status,
      200,
    );
    const fill = await run('head -c 2000000 /dev/zero > fill; echo filled');
    t.equal(JSON.parse(fill.payload.text).stdout, 'filled\n', 'a command may pass the bound: it is measured after');
    const refused = await run('echo never');
    t.equal(refused.event_type, 'agent.error');
    t.equal(refused.payload.code, 'work_folder_full', 'the next command is refused');
    t.match(refused.payload.message, /bound of 2097152 bytes.*commandLimits\.workBytes/);
    t.notMatch(refused.payload.message, h.d.dataDir, 'no host path in the message');
    t.equal(
      (await h.d.request('PATCH', '/settings', { commandLimits: { workBytes: 1000 } })).status,
      400,
      'at least 1 MiB',
    );
    t.equal((await h.d.request('PATCH', '/settings', { commandLimits: { workBytes: 8 * 1024 * 1024 } })).status, 200);
    t.equal(
      (await run('rm fill; echo freed')).event_type,
      'turn.completed',
      'a raised bound applies at the next command',
    );
  },
);
