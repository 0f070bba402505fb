/**
 * The `agt` command against the built daemon (the shipped extensions), the real providers extension and the fake
 * OpenAI server: one-shot chat (reply, exit code on agent.error, --json), approvals answered from
 * another `agt`, the connection found from the data directory, and the refusals (wrong token, no
 * daemon, bad usage) with their exit codes. The interactive chat is in cli-interactive.test.ts.
 * Real `agt` processes where the process is the point (one-shot chat and its exit codes, a chat waiting
 * while another terminal answers, the connection found from a fresh environment, `agt events` until a
 * signal, --version/--help, the refusals); the other commands run in this process (helpers/cli-in-process.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT } from './helpers/daemon.js';
import { wireDaemon } from './helpers/wire-daemon.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `agt` with only the given environment (no inherited AGT_* variables). */
function agt(args: string[], env: Record<string, string>): { done: Promise<Run> } {
  const child = spawn(process.execPath, [join(ROOT, 'bin/agt.mjs'), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? '/nonexistent', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<Run>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { done };
}

t.test('agt against the built daemon', async (t) => {
  const h = await wireDaemon(t);
  const id = await h.agent({ name: 'alpha', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const env = { AGT_DAEMON_URL: h.d.url, AGT_DAEMON_TOKEN: h.d.token };
  const run = (...args: string[]) => agt(args, env).done;
  /** The same command in this process (no Node start): for commands whose output, not process, is checked. */
  const cli = (...args: string[]) => agtInProcess(args, { ...env, NO_COLOR: '1' });

  await t.test('one-shot chat prints the reply and exits 0', async (t) => {
    h.model.push({ text: 'hello from the fake model' });
    const result = await run('chat', 'alpha', '-m', 'hi');
    t.equal(result.code, 0, result.stderr);
    t.equal(result.stdout, 'hello from the fake model\n');
  });

  await t.test('one-shot chat exits 1 on agent.error', async (t) => {
    h.model.push({ error: { code: 'upstream_error', status: 500, message: 'vendor is down' } });
    const result = await run('chat', 'alpha', '-m', 'hi');
    t.equal(result.code, 1);
    t.equal(result.stdout, '');
    t.match(result.stderr, /error: .*\(upstream_error\)/);
  });

  await t.test('--json output parses', async (t) => {
    h.model.push({ text: 'as json' });
    const chat = await run('--json', 'chat', 'alpha', '-m', 'hi');
    t.equal(chat.code, 0, chat.stderr);
    t.match(JSON.parse(chat.stdout), {
      agentId: id,
      turnId: String,
      status: 'completed',
      text: 'as json',
      error: null,
    });
    const agents = JSON.parse((await cli('agents', '--json')).stdout);
    t.match(agents, [{ id, name: 'alpha', runtimeState: 'idle', displayState: String }]);
    const status = JSON.parse((await cli('status', '--json')).stdout);
    t.match(status, {
      url: h.d.url,
      runtime: { dataDir: h.d.dataDir, agents: { loaded: 1 } },
      identity: { status: String },
      agents: [{ id }],
    });
    t.same(JSON.parse((await cli('approvals', '--json')).stdout), []);
  });

  await t.test('an approval waits for `agt approve` from another terminal', async (t) => {
    h.model.push({ toolCalls: [{ name: 'fs_write', args: { path: 'a.txt', content: 'x' } }] }, { text: 'written it' });
    const waiting = run('chat', 'alpha', '-m', 'write a.txt');
    const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === id);
    const taskId = (requested.payload as { taskId: string }).taskId;
    const pending = JSON.parse((await cli('approvals', '--json')).stdout);
    t.match(pending, [{ kind: 'approval', id: taskId, agentName: 'alpha', tool: 'fs_write' }]);
    const table = await cli('approvals');
    t.match(table.stdout, new RegExp(`approval\\s+alpha\\s+${taskId}`));
    const approved = await cli('approve', taskId);
    t.equal(approved.code, 0, approved.stderr);
    t.match(approved.stdout, /approved fs_write for alpha/);
    const result = await waiting;
    t.equal(result.code, 0, result.stderr);
    t.equal(result.stdout, 'written it\n');
    t.match(result.stderr, new RegExp(`waits for approval of fs_write.*agt approve ${taskId}`));
    t.match(result.stderr, /✓ fs_write/);
    t.equal((await cli('approve', taskId)).code, 1, 'no longer pending');
  });

  await t.test('a suspend prompt and an ask, answered with agt resume and agt answer', async (t) => {
    h.model.push(
      { toolCalls: [{ name: 'sys_set_state', args: { state: 'suspended', reason: 'need a break' } }] },
      { text: 'back at work' },
    );
    const suspended = run('chat', 'alpha', '-m', 'rest a bit');
    const prompt = await h.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'suspend',
    );
    t.match(JSON.parse((await cli('approvals', '--json')).stdout), [
      { kind: 'suspend', id: (prompt.payload as { requestId: string }).requestId, reason: 'need a break' },
    ]);
    t.equal((await cli('resume', 'alpha')).code, 0);
    const first = await suspended;
    t.equal(first.code, 0, first.stderr);
    t.equal(first.stdout, 'back at work\n');
    t.match(first.stderr, /asks to suspend: need a break/);

    h.model.push({ toolCalls: [{ name: 'ask', args: { question: 'Tea or coffee?' } }] }, { text: 'tea it is' });
    const asking = run('chat', 'alpha', '-m', 'order a drink');
    const ask = await h.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'ask',
    );
    const answered = await cli('answer', (ask.payload as { requestId: string }).requestId, 'tea,', 'please');
    t.equal(answered.code, 0, answered.stderr);
    t.equal((await asking).stdout, 'tea it is\n');
    const toolResult = h.model.calls
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .at(-1) as { content: string };
    t.match(toolResult.content, /tea, please/);
  });

  await t.test('the daemon and its token are found from the data directory', async (t) => {
    const result = await agt(['ps', '--json'], { AGT_DAEMON_SETTINGS: join(h.d.dataDir, 'settings.json') }).done;
    t.equal(result.code, 0, result.stderr);
    t.match(JSON.parse(result.stdout), [{ id }]);
  });

  await t.test('logs, config, events', async (t) => {
    const logs = JSON.parse((await cli('logs', 'alpha', '--json', '-n', '10')).stdout) as Array<{
      level: string;
      message: string;
    }>;
    t.ok(
      logs.some((row) => row.level === 'error' && /vendor is down|upstream/.test(row.message)),
      'the failed turn is in the agent log',
    );
    t.match((await cli('logs', 'alpha')).stdout, /error +runtime /);

    const changed = await cli(
      'config',
      'alpha',
      '--set',
      'description=set from agt',
      '--set',
      'limits.max_llm_calls_per_turn=7',
    );
    t.equal(changed.code, 0, changed.stderr);
    const config = JSON.parse((await cli('config', 'alpha')).stdout);
    t.match(config, { description: 'set from agt', limits: { max_llm_calls_per_turn: 7 }, name: 'alpha' });
    t.equal((await cli('config', 'alpha', '--set', 'model.provider=5')).code, 1, 'validated by the daemon');

    const child = spawn(process.execPath, [join(ROOT, 'bin/agt.mjs'), 'events', '--agent', 'alpha'], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const until = async (read: () => string, pattern: RegExp) => {
      const deadline = Date.now() + 20_000;
      while (!pattern.test(read())) {
        if (Date.now() > deadline) throw new Error(`failsafe: ${pattern} not seen:\n${read()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until(() => err, /watching alpha/);
    h.model.push({ text: 'seen on the stream' });
    await h.d.request('POST', `/agents/${id}/chat`, { text: 'hi' });
    await until(() => out, /turn\.completed/);
    t.match(out, /alpha turn\.started .* \(chat\)/);
    t.match(out, /alpha turn\.completed .*seen on the stream/);
    child.kill('SIGTERM');
  });

  await t.test('identity, providers, create, stop, start', async (t) => {
    const passphraseFile = join(h.dir, 'passphrase');
    writeFileSync(passphraseFile, 'a test passphrase\n');
    const created = await cli('identity', 'create', '--passphrase-file', passphraseFile);
    t.equal(created.code, 0, created.stderr);
    t.match(created.stdout, /Your seed phrase \(shown this once, never again\):\n\n {2}(\w+ ){11}\w+\n/);
    t.match(created.stdout, /Write it down/);
    t.equal(JSON.parse((await cli('identity', '--json')).stdout).status, 'ready');
    await h.d.request('POST', '/identity/lock');
    t.equal(JSON.parse((await cli('identity', '--json')).stdout).status, 'locked');
    const wrongFile = join(h.dir, 'wrong');
    writeFileSync(wrongFile, 'not it');
    t.equal((await cli('identity', 'unlock', '--passphrase-file', wrongFile)).code, 1, 'a wrong passphrase fails');
    const unlocked = await cli('identity', 'unlock', '--passphrase-file', passphraseFile);
    t.equal(unlocked.code, 0, unlocked.stderr);
    t.match(unlocked.stdout, /identity ready/);
    t.equal((await cli('identity', 'unlock')).code, 2, 'no passphrase and no terminal: a usage error');

    const added = await cli('providers', 'add', 'anthropic', '--id', 'claude', '--model', 'claude-x');
    t.equal(added.code, 0, added.stderr);
    const providers = JSON.parse((await cli('providers', '--json')).stdout);
    t.match(
      providers.find((p: { id: string }) => p.id === 'claude'),
      {
        type: 'anthropic',
        baseUrl: 'https://api.anthropic.com',
        apiKeyEnv: 'ANTHROPIC_API_KEY',
        defaultModel: 'claude-x',
      },
    );
    t.ok(
      providers.find((p: { id: string }) => p.id === 'local'),
      'the other providers are kept',
    );
    t.equal((await cli('providers', 'add', 'nonsense')).code, 2);

    const made = JSON.parse((await cli('create', 'Bravo', '--dir', h.dir, '--provider', 'local', '--json')).stdout);
    t.match(made, { name: 'Bravo', agentId: String, filePath: join(h.dir, 'bravo.agt') });
    t.equal((await cli('stop', 'Bravo')).code, 0);
    t.notOk(JSON.parse((await cli('ps', '--json')).stdout).some((a: { name: string }) => a.name === 'Bravo'));
    const started = await cli('start', made.filePath);
    t.equal(started.code, 0, started.stderr);
    t.match(started.stdout, /started Bravo \(loaded\)/);
    t.equal((await cli('stop', 'Bravo')).code, 0);
    const loaded = await cli('load', made.filePath, '--json');
    t.match(JSON.parse(loaded.stdout), { id: made.agentId });
  });

  await t.test('--version is the package version; --help lists the commands', async (t) => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    t.equal((await run('--version')).stdout.trim(), version);
    const help = await run('--help');
    t.equal(help.code, 0);
    for (const command of [
      'status',
      'chat',
      'logs',
      'events',
      'approvals',
      'approve',
      'create',
      'identity',
      'providers',
    ])
      t.match(help.stdout, new RegExp(`\\n  ${command}\\b`));
  });

  await t.test('refusals: wrong token 4, no daemon 3, bad usage 2, unknown agent 1', async (t) => {
    const wrong = await agt(['status'], { AGT_DAEMON_URL: h.d.url, AGT_DAEMON_TOKEN: 'not-the-token' }).done;
    t.equal(wrong.code, 4);
    t.match(wrong.stderr, /refused the request: the token from AGT_DAEMON_TOKEN is not this daemon's/);
    t.equal(wrong.stdout, '');
    const flag = await agt(['--token', 'nope', 'chat', 'alpha', '-m', 'hi'], { AGT_DAEMON_URL: h.d.url }).done;
    t.equal(flag.code, 4);
    t.match(flag.stderr, /token from --token/);
    const none = await agt(['agents'], { AGT_DAEMON_URL: 'http://127.0.0.1:9' }).done;
    t.equal(none.code, 3);
    t.match(none.stderr, /no agt daemon answers at http:\/\/127\.0\.0\.1:9/);
    const usage = await run('chat');
    t.equal(usage.code, 2);
    t.match(usage.stderr, /missing required argument/);
    const unknown = await run('chat', 'nobody', '-m', 'hi');
    t.equal(unknown.code, 1);
    t.match(unknown.stderr, /\(not_found\)/);
    const asJson = await run('--json', 'stop', 'nobody');
    t.equal(asJson.code, 1);
    t.match(JSON.parse(asJson.stderr), { error: String, code: 'not_found', exitCode: 1 });
    t.equal(asJson.stdout, '');
  });
});
