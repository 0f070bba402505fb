/**
 * Operator fixes against ONE built daemon (its stdout and stderr captured: the log lines
 * are part of what is tested) with the real providers, mcp, channels and compute extensions, a fake
 * OpenAI server, a fake Telegram Bot API, a recording fake `npm` on the daemon's PATH and a Docker host
 * that does not exist:
 * 1. PUT /agents/{id}/tools/{name} and `agt tools` change one tool, the others stay;
 * 2. the daemon's npm gets the owner's CA, proxy and npm settings (and global npmrc), nothing else;
 * 3. a Telegram adapter whose platform cannot be reached is `error`, logs it, and keeps retrying;
 * 4. expected conditions log one line without a stack, npm output is one summary, a stop line, and
 *    `agt logs -f` shows turns and tool calls;
 * 5. `POST /compute/setup` without a body is not a 400;
 * 6. `agt providers add openai-compatible|models|check|remove`;
 * 7. extension options through `/runtime/extensions/{name}/config` and `agt extensions`, applied live
 *    (channels) or after a restart (compute), persisted in the data directory's overlay, the manifest
 *    left as written.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { eventually } from './helpers/channels.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { startFakeTelegram } from './fakes/telegram.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A loopback port nobody listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * A fake npm: records its arguments and environment, answers `config get globalconfig`, and for
 * `install <name>` puts a package into `--prefix` the way npm does, printing many progress lines.
 */
function fakeNpm(bin: string, record: string): void {
  mkdirSync(bin, { recursive: true });
  const script = `#!${process.execPath}
const fs = require('node:fs'), path = require('node:path');
const args = process.argv.slice(2);
if (args[0] === 'config') { console.log('/owner/etc/npmrc'); process.exit(0); }
fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ args, env: process.env }));
const prefix = args[args.indexOf('--prefix') + 1];
const name = args[1];
fs.mkdirSync(path.join(prefix, 'node_modules', name), { recursive: true });
fs.writeFileSync(path.join(prefix, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: 'server.js' }));
const manifest = JSON.parse(fs.readFileSync(path.join(prefix, 'package.json'), 'utf8'));
manifest.dependencies = { ...manifest.dependencies, [name]: '^1.0.0' };
fs.writeFileSync(path.join(prefix, 'package.json'), JSON.stringify(manifest));
for (let i = 0; i < 60; i++) console.error('npm http fetch GET 200 http://registry.invalid/dep-' + i + ' 3ms (cache hit)');
console.log('added 1 package in 0.1s');
`;
  writeFileSync(join(bin, 'npm'), script);
  chmodSync(join(bin, 'npm'), 0o755);
}

t.test('operator fixes against one built daemon', async (t) => {
  const telegram = await startFakeTelegram(t);
  const model = await startFakeOpenAI(
    t,
    [reply.toolCalls([{ name: 'fs_list', args: {} }]), reply.text('listed them')],
    { models: ['fake-1', 'fake-2'] },
  );
  const unreachable = `http://127.0.0.1:${await closedPort()}`;
  const work = tempDir(t, 'agt-operator-');
  const bin = join(work, 'bin');
  const npmRecord = join(work, 'npm-call.json');
  fakeNpm(bin, npmRecord);
  const manifestPath = join(work, 'extensions.json');
  const module = (name: string) => join(ROOT, `extensions/${name}/index.ts`);
  writeFileSync(
    manifestPath,
    JSON.stringify({
      extensions: [
        { name: 'providers', module: module('providers'), enabled: true, config: { maxRetries: 0 } },
        { name: 'mcp', module: module('mcp'), enabled: true, config: {} },
        {
          name: 'channels',
          module: module('channels'),
          enabled: true,
          config: { reconnectBaseMs: 50, reconnectMaxMs: 200, types: { telegram: { apiRoot: unreachable } } },
        },
        { name: 'compute', module: module('compute'), enabled: true, config: {} },
        {
          name: 'reconfigurable',
          module: join(ROOT, 'test/fixtures/extensions/reconfigurable/index.ts'),
          enabled: true,
          config: {},
        },
      ],
    }),
  );
  // The built daemon with this manifest (AGT_EXTENSIONS): the test checks the daemon never writes into it.
  const manifestText = readFileSync(manifestPath, 'utf8');
  const d = await runDaemon(t, {
    settings: {
      providers: [
        { id: 'local', type: 'openai-compatible', name: 'Fake', baseUrl: model.baseUrl, defaultModel: 'fake-1' },
      ],
    },
    env: {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      AGT_EXTENSIONS: manifestPath,
      AGT_LOG_LEVEL: 'info',
      DOCKER_HOST: `unix://${join(work, 'no-docker.sock')}`,
      NODE_EXTRA_CA_CERTS: '/owner/proxy-ca.pem',
      HTTPS_PROXY: 'http://proxy.invalid:3128',
      NO_PROXY: 'localhost,127.0.0.1',
      npm_config_registry: 'http://registry.invalid/',
      NPM_CONFIG_STRICT_SSL: 'false',
      UNRELATED_DAEMON_VARIABLE: 'not for npm',
    },
  });
  t.ok(d.url, `the daemon started: ${d.stderr().slice(0, 2000)}`);
  const token = d.token;
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(d.url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const agt = (...args: string[]) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/agt.mjs'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: work, NO_COLOR: '1', AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = { code: null as number | null, stdout: '', stderr: '' };
    child.stdout.on('data', (chunk) => (run.stdout += chunk));
    child.stderr.on('data', (chunk) => (run.stderr += chunk));
    const done = new Promise<Run>((resolve) => child.once('close', (code) => resolve({ ...run, code })));
    return { child, run, done };
  };
  // The commands whose output is checked run in this process (helpers/cli-in-process.ts: no Node start
  // each); `agt logs -f` above stays a real process (followed, then killed).
  const cli = (...args: string[]) =>
    agtInProcess(args, { HOME: work, NO_COLOR: '1', AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: token });
  const logLines = () =>
    d
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>);

  t.equal((await api('POST', '/identity/create', { passphrase: 'operator fixes passphrase' })).status, 201);
  const file = await createAgentFile(work, {
    name: 'ops',
    model: { provider: 'local', model_id: 'fake-1' },
    tools: [
      { name: 'ask', enabled: true },
      { name: 'say', enabled: true },
      { name: 'msg_send', enabled: true },
    ],
  });
  const loaded = await api('POST', '/agents/load', { filePath: file });
  t.equal(loaded.status, 200, JSON.stringify(loaded.body));
  const agentId: string = loaded.body.id;
  const declared = async () =>
    (await api('GET', `/agents/${agentId}/config`)).body.config.tools as Array<{
      name: string;
      enabled: boolean;
      restricted?: boolean;
    }>;

  await t.test('1. one tool changes, the others stay (route and agt tools)', async (t) => {
    const enabled = await api('PUT', `/agents/${agentId}/tools/fs_list`, { enabled: true, restricted: false });
    t.equal(enabled.status, 200, JSON.stringify(enabled.body));
    t.match(enabled.body, { agentId, tool: { name: 'fs_list', enabled: true, restricted: false, source: 'builtin' } });
    const restricted = await api('PUT', `/agents/${agentId}/tools/fs_write`, { restricted: true });
    t.match(restricted.body.tool, { name: 'fs_write', restricted: true });
    t.same(
      (await declared()).map((tool) => tool.name),
      ['ask', 'say', 'msg_send', 'fs_list', 'fs_write'],
      'added to the declarations, none dropped',
    );
    t.match(await api('PUT', `/agents/${agentId}/tools/no_such_tool`, { enabled: true }), {
      status: 404,
      body: { code: 'unknown_tool', tool: 'no_such_tool' },
    });
    t.equal((await api('PUT', `/agents/${agentId}/tools/say`, {})).status, 400, 'an empty change is refused');
    t.equal((await api('PUT', `/agents/${agentId}/tools/say`, { enabled: 'yes' })).status, 400);
    t.equal(
      (await api('PUT', `/agents/${agentId}/tools/say`, { enabled: true, locked: false })).status,
      400,
      'only enabled and restricted',
    );

    const disabled = await cli('tools', 'ops', 'disable', 'msg_send');
    t.equal(disabled.code, 0, disabled.stderr);
    t.match(disabled.stdout, /msg_send of ops: disabled/);
    const tools = await declared();
    t.match(
      tools.find((tool) => tool.name === 'msg_send'),
      { enabled: false },
    );
    t.match(
      tools.find((tool) => tool.name === 'ask'),
      { enabled: true },
      'ask is still enabled',
    );
    const listed = await cli('tools', 'ops');
    t.equal(listed.code, 0, listed.stderr);
    t.match(listed.stdout, /fs_write\s+yes\s+yes\s+builtin/);
    const json = JSON.parse((await cli('--json', 'tools', 'ops', 'ls')).stdout) as Array<{ name: string }>;
    t.ok(
      json.some((tool) => tool.name === 'sys_fetch'),
      'built-in tools listed',
    );
    const unknown = await cli('tools', 'ops', 'restrict', 'no_such_tool');
    t.equal(unknown.code, 1);
    t.match(unknown.stderr, /no tool "no_such_tool"/);
    t.equal((await cli('tools', 'ops', 'explode', 'say')).code, 2, 'an unknown action is a usage error');
  });

  await t.test('4. agt logs -f shows the turn and its tool calls', async (t) => {
    const follow = agt('logs', 'ops', '-f');
    t.teardown(() => follow.child.kill());
    await eventually('logs -f to follow', () => /following ops/.test(follow.run.stderr));
    const chat = await api('POST', `/agents/${agentId}/chat?wait=true`, { text: 'list your files' });
    t.match(chat.body, { status: 'completed', text: 'listed them' });
    await eventually('the turn in logs -f', () => /turn\.completed/.test(follow.run.stdout));
    t.match(follow.run.stdout, /turn\.started/);
    t.match(follow.run.stdout, /tool\.started fs_list/);
    t.match(follow.run.stdout, /tool\.completed fs_list ok/);
  });

  await t.test("2 and 4. the daemon's npm: the owner's settings, one summary line", async (t) => {
    const installed = await api('POST', '/mcp/packages', { package: 'fake-mcp-pkg' });
    t.ok(installed.status === 201 || installed.status === 202, JSON.stringify(installed.body));
    await eventually('npm to have run', () => existsSync(npmRecord));
    const { args, env } = JSON.parse(readFileSync(npmRecord, 'utf8')) as {
      args: string[];
      env: Record<string, string>;
    };
    t.match(
      env,
      {
        NODE_EXTRA_CA_CERTS: '/owner/proxy-ca.pem',
        HTTPS_PROXY: 'http://proxy.invalid:3128',
        NO_PROXY: 'localhost,127.0.0.1',
        npm_config_registry: 'http://registry.invalid/',
        NPM_CONFIG_STRICT_SSL: 'false',
      },
      'CA, proxy and npm settings reach npm',
    );
    t.equal(env.UNRELATED_DAEMON_VARIABLE, undefined, 'other daemon variables do not');
    t.notOk(
      Object.keys(env).some((name) => name.startsWith('AGT_')),
      "nor the kernel's",
    );
    t.equal(
      args[args.indexOf('--globalconfig') + 1],
      '/owner/etc/npmrc',
      "the owner's global npmrc, not one under --prefix",
    );
    t.ok(args.includes('--ignore-scripts') && args.includes('--global=false'));
    const done = await eventually('the summary line', () =>
      logLines().find((line) => /mcp: npm install fake-mcp-pkg done/.test(line.msg)),
    );
    t.match(done.msg, /added 1 package in 0\.1s/);
    t.equal(logLines().filter((line) => /mcp: npm: /.test(line.msg)).length, 0, 'no per-line npm output at info level');
  });

  await t.test('3 and 7. an unreachable platform is error, retried; a new apiRoot applies live', async (t) => {
    t.equal(
      (
        await api('PUT', `/agents/${agentId}/credentials/adapter:telegram:TELEGRAM_BOT_TOKEN`, {
          value: telegram.token,
        })
      ).status,
      200,
    );
    t.equal(
      (await api('PUT', `/agents/${agentId}/adapters/telegram`, { enabled: true, policy: { dm: 'all' } })).status,
      200,
    );
    const adapter = async () =>
      (await api('GET', `/agents/${agentId}/adapters`)).body.adapters.find((a: any) => a.type === 'telegram');
    let last: unknown;
    const failing = await eventually('two failed attempts', async () => {
      const now = (last = await adapter());
      return now?.status === 'error' && now.recentErrors.length >= 2 ? now : undefined;
    }).catch((error) => {
      throw new Error(`${error.message}; last: ${JSON.stringify(last)}; log: ${d.stderr().slice(-1500)}`);
    });
    // The endpoint and the system's reason, not "Network request for 'getMe' failed!" alone.
    const unreachableReason = new RegExp(
      `^Telegram: cannot reach ${unreachable.replace(/[.]/g, '\\.')} \\(getMe\\): ECONNREFUSED 127\\.0\\.0\\.1:\\d+$`,
    );
    t.match(failing.error, unreachableReason, 'the reason names the endpoint and the cause');
    const warned = await eventually('the log line', () =>
      logLines().find((line) => line.msg === 'channel adapter cannot reach its platform; retrying'),
    );
    t.match(warned, { level: 40, adapter: 'telegram', agentId, reason: unreachableReason });
    t.notOk('err' in warned, 'one line, no stack');

    const view = await api('GET', '/runtime/extensions/channels/config');
    t.match(view.body, {
      name: 'channels',
      config: { types: { telegram: { apiRoot: unreachable } } },
      effective: { sendAttempts: 5 },
      reconfigurable: true,
    });
    t.equal(view.body.schema.type, 'object', 'the options schema');
    const refused = await api('PATCH', '/runtime/extensions/channels/config', { reconnectBaseMs: 'soon' });
    t.match(refused, { status: 400, body: { code: 'bad_request', path: '/reconnectBaseMs' } });
    const changed = await api('PATCH', '/runtime/extensions/channels/config', {
      types: { telegram: { apiRoot: telegram.apiRoot } },
    });
    t.match(changed, {
      status: 200,
      body: {
        applied: true,
        restartRequired: false,
        config: { reconnectBaseMs: 50, types: { telegram: { apiRoot: telegram.apiRoot } } },
      },
    });
    await eventually('connected with the new apiRoot', async () => (await adapter())?.status === 'connected');
    const overlay = () => JSON.parse(readFileSync(join(d.dataDir, 'extensions.config.json'), 'utf8'));
    t.equal(
      overlay().extensions.channels.config.types.telegram.apiRoot,
      telegram.apiRoot,
      "persisted in the data directory's overlay",
    );
    t.equal(readFileSync(manifestPath, 'utf8'), manifestText, 'the manifest is not written');
    t.match((await api('GET', '/runtime/extensions/channels/config')).body, { source: 'overlay' });

    const cliSet = await cli('extensions', 'config', 'channels', '--set', 'reconnectMaxMs=250');
    t.equal(cliSet.code, 0, cliSet.stderr);
    t.match(cliSet.stdout, /channels: options saved in the data directory and applied/);
    const shown = JSON.parse((await cli('--json', 'extensions', 'config', 'channels')).stdout);
    t.match(shown, { config: { reconnectMaxMs: 250, reconnectBaseMs: 50 } });
    const computeSet = await cli('extensions', 'config', 'compute', '--set', 'memoryMb=256');
    t.equal(computeSet.code, 0, computeSet.stderr);
    t.match(
      computeSet.stderr,
      /compute applies them at the next daemon start \(restart the daemon: agt daemon stop, then agtd/,
      'no reconfigure hook: after a restart of the daemon',
    );
    t.match((await api('GET', '/runtime/extensions/compute/config')).body, {
      config: { memoryMb: 256 },
      reconfigurable: false,
    });
    t.equal((await cli('extensions', 'config', 'compute', '--set', 'memoryMb=1')).code, 1, 'below the schema minimum');
    t.match(await api('GET', '/runtime/extensions/nope/config'), { status: 404, body: { code: 'not_found' } });

    // A reconfigure hook that refuses: 422, the old value stays in force and in the overlay.
    t.match(await api('PUT', '/runtime/extensions/reconfigurable/config', { greeting: 'hi there' }), {
      status: 200,
      body: { applied: true, effective: { greeting: 'hi there' } },
    });
    t.same((await api('GET', '/reconfigurable')).body, { greeting: 'hi there' }, 'applied live');
    t.match(await api('PUT', '/runtime/extensions/reconfigurable/config', { greeting: 'please refuse' }), {
      status: 422,
      body: { code: 'reconfigure_failed', error: /this greeting is refused/ },
    });
    t.same((await api('GET', '/reconfigurable')).body, { greeting: 'hi there' }, 'the old value stays');
    t.same(overlay().extensions.reconfigurable.config, { greeting: 'hi there' }, 'nothing refused is saved');
    t.equal(readFileSync(manifestPath, 'utf8'), manifestText, 'the manifest is still as written');
    t.match(await api('PUT', '/runtime/extensions/reconfigurable/config', { greeting: 'x'.repeat(41) }), {
      status: 400,
      body: { path: '/greeting' },
    });
    const listed = await cli('extensions', 'ls');
    t.match(listed.stdout, /channels\s+1\.0\.0\s+started\s+\/channels/);
  });

  await t.test('6. agt providers: openai-compatible, models, check, remove', async (t) => {
    t.equal((await cli('providers', 'add', 'openai-compatible', '--id', 'lm')).code, 2, '--base-url is required');
    const added = await cli(
      'providers',
      'add',
      'openai-compatible',
      '--id',
      'lm',
      '--base-url',
      model.baseUrl,
      '--model',
      'fake-2',
    );
    t.equal(added.code, 0, added.stderr);
    t.match((await api('GET', '/settings')).body.providers, [
      { id: 'local' },
      { id: 'lm', type: 'openai-compatible', baseUrl: model.baseUrl, defaultModel: 'fake-2' },
    ]);
    const models = await cli('providers', 'models', 'lm');
    t.equal(models.code, 0, models.stderr);
    t.equal(models.stdout, 'fake-1\nfake-2\n');
    const check = await cli('providers', 'check', 'lm');
    t.equal(check.code, 0, check.stderr);
    t.match(check.stdout, /^ok lm answered/);
    const removed = await cli('providers', 'remove', 'lm');
    t.equal(removed.code, 0, removed.stderr);
    t.notOk((await api('GET', '/settings')).body.providers.some((p: any) => p.id === 'lm'));
    t.equal((await cli('providers', 'rm', 'lm')).code, 1, 'an unknown id');
  });

  await t.test('5. identity hints name agt commands, not HTTP routes', async (t) => {
    const shown = await cli('identity');
    t.equal(shown.code, 0, shown.stderr);
    t.match(shown.stdout, /agt identity confirm-backup/);
    t.notMatch(shown.stdout + (await cli('status')).stdout, /POST \/identity/, 'no HTTP routes in the hints');
    t.equal((await cli('identity', 'confirm-backup')).code, 0);
    t.notMatch((await cli('identity')).stdout, /confirm-backup/);
  });

  await t.test('4 and 5. no Docker: one line at start; a 503 is one warning; no body is not a 400', async (t) => {
    const setup = await api('POST', '/compute/setup');
    t.match(setup, { status: 503, body: { code: 'unavailable' } }, 'no body: the engine is asked (was 400)');
    const warned = await eventually('the 503 line', () =>
      logLines().find((line) => /request answered 503 unavailable/.test(line.msg ?? '')),
    );
    t.equal(warned.level, 40);
    const start = logLines().find((line) => line.msg === 'compute: the engine is not reachable now');
    t.match(start, { level: 40, reason: /not reachable/ });
    t.notOk(/"stack"/.test(d.stderr()), 'no stack trace anywhere in the log');
    t.equal(logLines().filter((line) => line.level >= 50).length, 0, 'no ERROR line');
  });

  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0);
  t.ok(
    logLines().some((line) => line.msg === 'agt daemon stopped (SIGTERM)'),
    'a stop line',
  );
});
