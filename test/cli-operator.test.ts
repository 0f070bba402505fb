/**
 * The operator's `agt` commands against one built daemon (the shipped
 * extensions, compute off; the fake OpenAI server as the model):
 * rm, restart, ps -a, inspect, history, mcp, adapters, credentials, files, exec, send, tracked,
 * service install, completion, daemon stop (last: it ends the daemon), each with --json and its exit
 * codes. The built CLI runs in this process (helpers/cli-in-process.ts), one command at a time;
 * docs/cli.md is checked against the command tree so it cannot drift.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import t from 'tap';
import type { Command } from 'commander';
import { CARRIED, SECRETS } from '../cli/commands/service.js';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { agtInProcess, builtCli } from './helpers/cli-in-process.js';
import { ROOT, runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { EVERYTHING } from './helpers/mcp.js';
import { startFakeOpenAI } from './fakes/openai.js';
import { WireModel } from './fixtures/runtime/wire-model.js';

/** Runs the built `agt args…` in this process (helpers/cli-in-process.ts), `stdin` given. */
const inProcess = (args: string[], stdin?: Buffer | string, env: Record<string, string> = {}) =>
  agtInProcess(args, env, stdin);

const commandPaths = (command: Command, prefix = ''): string[] =>
  command.commands.flatMap((c) => [`${prefix}${c.name()}`, ...commandPaths(c, `${prefix}${c.name()} `)]);

t.test('agt operator commands against one daemon', async (t) => {
  const wire = new WireModel();
  const fake = await startFakeOpenAI(t, wire.script);
  const agentsDir = tempDir(t, 'agt-cli-agents-');
  // The shipped extensions but compute: with it on, `agt exec` would run in its (absent) Docker engine.
  const { extensions } = shippedManifest();
  const d = await runDaemon(t, {
    extensions: {
      extensions: extensions.map((entry: any) => (entry.name === 'compute' ? { ...entry, enabled: false } : entry)),
    },
    settings: {
      providers: [
        {
          id: 'local',
          type: 'openai-compatible',
          name: 'Fake OpenAI',
          baseUrl: fake.baseUrl,
          defaultModel: 'fake-model',
        },
      ],
    },
  });
  t.ok(d.url, `the daemon started: ${d.stderr()}`);
  const token = d.token;
  const settings = join(d.dataDir, 'settings.json');
  const agt = (...args: string[]) => inProcess(['--url', d.url, '--token', token, '--settings', settings, ...args]);
  const json = async (...args: string[]) => {
    const run = await agt(...args, '--json');
    if (run.code !== 0) throw new Error(`agt ${args.join(' ')} exited ${run.code}: ${run.stderr}${run.stdout}`);
    return JSON.parse(run.stdout);
  };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(d.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }).catch((error: Error) => {
      throw new Error(
        `${method} ${path}: ${error.message}; the daemon said: ${d.stderr()} ${d.stdout()} exit ${d.child.exitCode} ${d.child.signalCode}`,
      );
    });
    return { status: response.status, body: await response.json() };
  };

  t.equal((await api('POST', '/identity/create', { passphrase: 'cli operator test' })).status, 201, 'owner identity');
  const alpha = (await api('POST', '/agents/create', { name: 'alpha', directory: agentsDir, provider: 'local' })).body;
  const bravo = (await api('POST', '/agents/create', { name: 'bravo', directory: agentsDir, provider: 'local' })).body;
  t.match([alpha, bravo], [{ agentId: String }, { agentId: String }], 'two agents');

  await t.test('tracked folders and ps -a', async (t) => {
    // agt create (POST /agents/create) tracks the folder it writes to.
    t.match(await json('tracked'), { folders: [{ path: agentsDir, exists: true, agentCount: 2 }] });
    t.equal((await agt('tracked', 'add', agentsDir)).code, 1, 'tracked already: 409');
    t.equal((await agt('tracked', 'rm', agentsDir)).code, 0);
    t.equal((await agt('tracked', 'rm', agentsDir)).code, 1, 'not tracked');
    t.match(await json('tracked'), { folders: [] });
    const added = await agt('tracked', 'add', agentsDir);
    t.equal(added.code, 0, added.stderr);
    t.match(added.stdout, /tracking .* \(2 agent files\)/);
    t.equal((await agt('stop', 'bravo')).code, 0);
    t.notOk(
      (await json('ps')).some((a: { name: string }) => a.name === 'bravo'),
      'ps: loaded only',
    );
    const all = await json('ps', '-a');
    t.match(
      all.find((a: { name: string }) => a.name === 'bravo'),
      { id: bravo.agentId, loaded: false, runtimeState: 'unloaded', filePath: bravo.filePath },
    );
    t.match(
      all.find((a: { name: string }) => a.name === 'alpha'),
      { id: alpha.agentId, loaded: true },
    );
    t.match((await agt('ps', '-a')).stdout, /bravo\s+unloaded\s+-/);
    t.equal((await agt('start', 'bravo')).code, 0, 'started again by name from the tracked folder');
  });

  await t.test('inspect, history, restart', async (t) => {
    wire.push({ text: 'first reply' }, { text: 'second reply' });
    for (const text of ['first question', 'second question'])
      t.equal((await api('POST', `/agents/${alpha.agentId}/chat?wait=true`, { text })).body.status, 'completed');

    const seen = await json('inspect', 'alpha');
    t.match(seen, {
      id: alpha.agentId,
      filePath: alpha.filePath,
      config: { name: 'alpha' },
      status: { runtimeState: String },
      adapters: [],
      mcpServers: [],
    });
    t.ok(
      seen.tools.some((tool: { name: string }) => tool.name === 'msg_send'),
      'tools listed',
    );
    const inspected = await agt('inspect', 'alpha');
    t.match(
      inspected.stdout,
      /^alpha .*\nfile +.*alpha\.agt\nstate +\w+.*\nmodel +local\/fake-model\n/,
      inspected.stdout,
    );

    const last = await json('history', 'alpha', '-n', '2');
    t.match(last, {
      total: 4,
      page: 2,
      pages: 2,
      offset: 2,
      rows: [{ role: 'user', content: { text: 'second question' } }, { role: 'assistant' }],
    });
    const first = await agt('history', 'alpha', '-n', '2', '--page', '1');
    t.match(first.stdout, /you: first question\n.*agent: first reply\n$/);
    t.match(first.stderr, /rows 1-2 of 4, page 1 of 2/);
    t.equal((await agt('history', 'alpha', '-n', 'x')).code, 2, 'a bad --limit is usage');

    const restarted = await agt('restart', 'alpha');
    t.equal(restarted.code, 0, restarted.stderr);
    t.match(restarted.stdout, /restarted alpha/);
    t.ok(
      (await json('ps')).some((a: { id: string }) => a.id === alpha.agentId),
      'loaded again',
    );
    t.equal((await json('history', 'alpha')).total, 4, 'the conversation survived the restart');
  });

  await t.test('credentials: from stdin, never printed', async (t) => {
    const secret = 'hunter2-very-secret';
    const set = await inProcess(
      ['--url', d.url, '--token', token, 'credentials', 'set', 'alpha', 'provider:openai'],
      `${secret}\n`,
    );
    t.equal(set.code, 0, set.stderr);
    t.match(set.stdout, /set provider:openai \(19 characters, sealed\)/);
    const listed = await json('credentials', 'ls', 'alpha');
    t.match(listed, {
      locked: false,
      credentials: [{ name: 'provider:openai', set: true, sealed: true, length: secret.length }],
    });
    const human = await agt('credentials', 'ls', 'alpha');
    t.notMatch(human.stdout + set.stdout + JSON.stringify(listed), secret, 'the value is never shown');
    t.equal(
      (await inProcess(['--url', d.url, '--token', token, 'credentials', 'set', 'alpha', 'x'], '')).code,
      2,
      'an empty value is usage',
    );
    t.equal((await agt('credentials', 'rm', 'alpha', 'provider:openai')).code, 0);
    t.equal((await agt('credentials', 'rm', 'alpha', 'provider:openai')).code, 1, 'nothing to delete');
    t.equal((await agt('credentials', 'lock', 'alpha')).code, 1, 'not password-protected: 409');
    t.equal(
      (await inProcess(['--url', d.url, '--token', token, 'credentials', 'unlock', 'alpha'], 'pw\n')).code,
      1,
      'unlock: not password-protected: 409',
    );
  });

  await t.test('files: ls, put, cat, mv, rm', async (t) => {
    const binary = Buffer.from([0, 255, 1, 2, 0x80, 10]);
    t.equal(
      (await inProcess(['--url', d.url, '--token', token, 'files', 'put', 'alpha', 'data/blob.bin'], binary)).code,
      0,
    );
    const local = join(agentsDir, 'note.txt');
    writeFileSync(local, 'hello file\n');
    t.equal((await agt('files', 'put', 'alpha', 'notes/note.txt', local, '--readonly')).code, 0);
    t.same((await agt('files', 'cat', 'alpha', 'data/blob.bin')).bytes, binary, 'the bytes come back as stored');
    t.equal((await agt('files', 'cat', 'alpha', 'notes/note.txt')).stdout, 'hello file\n');
    t.match(await json('files', 'ls', 'alpha', 'notes'), {
      files: [{ path: 'notes/note.txt', size: 11, protection: 'readonly' }],
    });
    t.equal((await agt('files', 'mv', 'alpha', 'notes/note.txt', 'notes/moved.txt')).code, 0);
    t.equal((await agt('files', 'rm', 'alpha', 'notes/moved.txt')).code, 0);
    const missing = await agt('files', 'cat', 'alpha', 'notes/moved.txt', '--json');
    t.equal(missing.code, 1);
    t.match(JSON.parse(missing.stderr), { code: 'not_found', exitCode: 1 });
    t.equal((await agt('files', 'put', 'alpha', '../escape', local)).code, 1, "the path rule is the daemon's (400)");
  });

  await t.test('adapters: ls, set, status, remove', async (t) => {
    const listed = await json('adapters', 'ls');
    t.ok(
      listed.types.some((type: { type: string }) => type.type === 'telegram'),
      'types listed',
    );
    const set = await json('adapters', 'set', 'alpha', 'telegram', '--disable', '--policy', '{"dm":"all"}');
    t.match(set, { adapter: { type: 'telegram', enabled: false } });
    t.match((await json('config', 'alpha')).adapters, { telegram: { enabled: false, policy: { dm: 'all' } } });
    await json('adapters', 'set', 'alpha', 'telegram', '--disable', '--max-attachment-size', '1000');
    t.match(
      (await json('config', 'alpha')).adapters.telegram,
      { policy: { dm: 'all' }, limits: { max_attachment_size: 1000 } },
      'set merges into what the agent has',
    );
    t.match(await json('adapters', 'status', 'alpha'), {
      adapters: [{ type: 'telegram', enabled: false, status: String, recentErrors: [] }],
    });
    t.equal(
      (await agt('adapters', 'restart', 'alpha', 'telegram')).code,
      1,
      'a disabled adapter is not restarted: 404',
    );
    t.equal((await agt('adapters', 'set', 'alpha', 'nonsense')).code, 1, 'unknown type: 400');
    t.equal((await agt('adapters', 'set', 'alpha', 'telegram', '--config', '[1]')).code, 2, 'usage');
    t.equal((await agt('adapters', 'remove', 'alpha', 'telegram')).code, 0);
    t.equal((await agt('adapters', 'remove', 'alpha', 'telegram')).code, 1, 'nothing to remove');
  });

  await t.test('mcp: add, ls, restart, tools, remove', async (t) => {
    const added = await agt(
      'mcp',
      'add',
      'everything',
      '--command',
      process.execPath,
      '--log-level',
      'info',
      '--expose-work-folder',
      '--arg',
      EVERYTHING,
      'stdio',
    );
    t.equal(added.code, 0, added.stderr);
    t.equal((await agt('mcp', 'add', 'everything', '--command', 'x')).code, 1, 'exists: 409');
    t.equal((await agt('mcp', 'add', 'two', '--command', 'x', '--http', 'http://x')).code, 2, 'one kind only');
    t.equal(
      (await agt('mcp', 'add', 'bad', '--command', 'x', '--env', 'LD_PRELOAD=x')).code,
      1,
      'a refused variable: 400',
    );
    t.match(await json('mcp', 'ls'), {
      registrations: [
        {
          name: 'everything',
          type: 'command',
          command: process.execPath,
          args: [EVERYTHING, 'stdio'],
          logLevel: 'info',
          exposeWorkFolder: true,
        },
      ],
    });
    await json(
      'config',
      'alpha',
      '--patch',
      JSON.stringify({ mcp: { servers: [{ name: 'everything', transport: 'stdio' }] } }),
    );
    const restarted = await json('mcp', 'restart', 'alpha', 'everything');
    t.match(restarted, { name: 'everything', status: 'connected' });
    t.match(await json('mcp', 'ls', '--agent', 'alpha'), { servers: [{ name: 'everything', status: 'connected' }] });
    const tools = await json('mcp', 'tools', 'alpha', 'everything');
    t.ok(
      tools.tools.length > 0 && tools.tools.every((tool: { source: string }) => tool.source === 'mcp:everything'),
      'its tools',
    );
    t.match((await agt('mcp', 'tools', 'alpha')).stdout, /TOOL +SERVER/);
    t.equal((await agt('mcp', 'enable-tool', 'alpha', 'everything', 'echo')).code, 1, 'no schema change waits: 404');
    await json('config', 'alpha', '--patch', JSON.stringify({ mcp: null }));
    t.equal((await agt('mcp', 'remove', 'everything')).code, 0);
    t.equal((await agt('mcp', 'rm', 'everything')).code, 1, 'gone: 404');
    t.match(await json('mcp', 'packages'), { dir: join(d.dataDir, 'mcp-servers'), packages: [] });
    t.equal((await agt('mcp', 'uninstall', 'not-installed')).code, 1, 'not installed: 404');
  });

  // A host that cannot make a sandbox runs no agent command: the case is skipped, saying why.
  const probe = await new HostCommandRunner({ dataDir: tempDir(t, 'agt-cli-probe-') }).probe();
  await t.test(
    "exec runs where the agent's commands run",
    { skip: probe.available ? false : `no sandbox can be made here: ${probe.reason}` },
    async (t) => {
      const ran = await agt('exec', 'alpha', '--', 'echo', 'hi there', "it's");
      t.equal(ran.code, 0, ran.stderr);
      t.equal(ran.stdout, "hi there it's\n", 'arguments quoted for the shell');
      const asJson = await agt('--json', 'exec', 'alpha', '--', 'echo ok');
      t.match(JSON.parse(asJson.stdout), { ok: true, exitCode: 0, stdout: 'ok\n' }, asJson.stderr);
      const failed = await agt('exec', 'alpha', '--', 'echo oops >&2; exit 3');
      t.equal(failed.code, 3, "the command's exit code passes through, as docker exec's does");
      t.match(failed.stderr, /exited with 3: oops/);
      t.match(JSON.parse((await agt('--json', 'exec', 'alpha', '--', 'exit 42')).stdout), {
        ok: false,
        exitCode: 42,
        error: { code: 'command_failed' },
      });
      t.equal((await agt('exec', 'nobody', '--', 'true')).code, 1, 'unknown agent');
    },
  );

  await t.test('send: a mesh message from one agent to another', async (t) => {
    const sent = await json('send', 'alpha', bravo.did, 'hello', 'bravo', '--wait');
    t.match(sent, { agentId: alpha.agentId, messageId: Number, status: 'delivered' });
    const inbox = (await api('GET', `/agents/${bravo.agentId}/inbox`)).body.messages;
    t.match(inbox.at(-1), { source: 'mesh', text: 'hello bravo', sender: alpha.did });
    const failed = await agt('send', 'alpha', 'did:key:z6MkNoSuchAgentAnywhere', 'lost', '--channel', 'nowhere');
    t.equal(failed.code, 0, 'queued (no transport claims it)');
    t.match(failed.stdout, /message \d+ queued/);
    await json('config', 'bravo', '--set', 'messaging.mode=listen_only');
    t.equal((await agt('send', 'bravo', 'alpha', 'hi')).code, 1, 'listen_only: 403');
  });

  await t.test('rm asks first, deletes loaded and tracked agents', async (t) => {
    const refused = await agt('rm', 'bravo');
    t.equal(refused.code, 2, 'no terminal and no --yes: usage');
    t.match(refused.stderr, /confirm with --yes/);
    t.ok(existsSync(bravo.filePath), 'nothing deleted');
    // On a terminal (a pty made by util-linux `script`, where there is one) it asks; "n" keeps the agent.
    if (spawnSync('script', ['--version']).status === 0) {
      const asked = spawnSync(
        'script',
        ['-qec', `${process.execPath} ${join(ROOT, 'bin/agt.mjs')} rm bravo`, '/dev/null'],
        {
          input: 'n\n',
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH ?? '',
            HOME: '/nonexistent',
            NO_COLOR: '1',
            TERM: 'dumb',
            AGT_DAEMON_URL: d.url,
            AGT_DAEMON_TOKEN: token,
          },
          timeout: 30_000,
        },
      );
      t.match(asked.stdout, /Delete bravo and its file .*bravo\.agt\?/, 'the question names the file');
      t.match(asked.stdout, /nothing deleted/);
      t.ok(existsSync(bravo.filePath), 'answered no: the file stays');
    }
    const removed = await json('rm', 'bravo', '--yes');
    t.match(removed, { agentId: bravo.agentId, filePath: bravo.filePath, deleted: true });
    t.notOk(existsSync(bravo.filePath), 'the file is gone');
    t.equal((await agt('stop', 'alpha')).code, 0);
    const tracked = await agt('rm', 'alpha', '-y');
    t.equal(tracked.code, 0, tracked.stderr);
    t.notOk(existsSync(alpha.filePath), 'a tracked agent that was not loaded is found and deleted');
    t.equal((await agt('rm', 'alpha', '-y')).code, 1, 'gone: 404');
  });

  await t.test('service install writes a user unit under XDG_CONFIG_HOME, never enabling it', async (t) => {
    const xdg = tempDir(t, 'agt-cli-xdg-');
    const env = { XDG_CONFIG_HOME: xdg };
    const unitPath = join(xdg, 'systemd/user/agtd.service');
    const printed = await inProcess(
      ['--settings', settings, 'service', 'install', '--print', '--port', '7999'],
      undefined,
      env,
    );
    t.equal(printed.code, 0, printed.stderr);
    t.notOk(existsSync(unitPath), '--print writes nothing');
    t.match(printed.stdout, /\[Service\]\nType=simple\nExecStart=".*node.*" ".*bin\/agtd\.mjs"\n/);
    t.match(printed.stdout, `Environment="AGT_USER_DATA_DIR=${d.dataDir}"`);
    t.match(printed.stdout, 'Environment="AGT_DAEMON_PORT=7999"');
    // The daemon variables this shell sets go into the unit (paths made absolute); secrets do not.
    const shell = {
      ...env,
      MESH_PORT: '7501',
      DOCKER_HOST: 'unix:///run/other-docker.sock',
      AGT_OWNER_PASSPHRASE_FILE: 'pass.txt',
      AGT_OWNER_PASSPHRASE: 'a secret passphrase',
    };
    const carried = await inProcess(['--settings', settings, 'service', 'install', '--print'], undefined, shell);
    t.match(carried.stdout, 'Environment="MESH_PORT=7501"');
    t.match(carried.stdout, 'Environment="DOCKER_HOST=unix:///run/other-docker.sock"');
    t.match(carried.stdout, `Environment="AGT_OWNER_PASSPHRASE_FILE=${join(process.cwd(), 'pass.txt')}"`);
    t.match(
      carried.stdout,
      `Environment="AGT_DAEMON_SETTINGS=${settings}"`,
      'the settings file itself, whatever its name',
    );
    t.notMatch(carried.stdout, /a secret passphrase|AGT_OWNER_PASSPHRASE=/, 'a secret stays out of the unit');
    const written1 = await inProcess(['--settings', settings, 'service', 'install'], undefined, shell);
    t.match(
      written1.stderr,
      /AGT_OWNER_PASSPHRASE is a secret and is not written into the unit: use AGT_OWNER_PASSPHRASE_FILE/,
    );
    t.equal((await inProcess(['service', 'uninstall'], undefined, env)).code, 0);
    // Every variable docs/environment.md names is carried, is a secret, or is how the data directory is found.
    const documented = [
      ...readFileSync(join(ROOT, 'docs/environment.md'), 'utf8').matchAll(/`((?:AGT|MESH|DOCKER)_[A-Z_]+)`/g),
    ].map((m) => m[1]!);
    const known = new Set<string>([
      ...CARRIED,
      ...Object.keys(SECRETS),
      'AGT_DAEMON_PORT',
      'AGT_DAEMON_SETTINGS',
      'AGT_USER_DATA_DIR',
      'AGT_DAEMON_URL',
    ]);
    t.same(
      [...new Set(documented)].filter((name) => !known.has(name)),
      [],
      'agt service install knows every daemon variable of docs/environment.md',
    );
    const written = await inProcess(['--settings', settings, '--json', 'service', 'install'], undefined, env);
    t.equal(written.code, 0, written.stderr);
    t.match(JSON.parse(written.stdout), { path: unitPath, written: true });
    t.match(readFileSync(unitPath, 'utf8'), /WantedBy=default\.target/);
    t.equal((await inProcess(['service', 'install'], undefined, env)).code, 1, 'exists without --force');
    t.equal((await inProcess(['service', 'install', '--force'], undefined, env)).code, 0);
    if (spawnSync('systemd-analyze', ['--version']).status === 0) {
      const verify = spawnSync('systemd-analyze', ['verify', '--user', unitPath], { encoding: 'utf8' });
      t.notMatch(verify.stderr, /agtd\.service:\d+:/, 'systemd reads the unit without complaint');
    }
    t.equal((await inProcess(['service', 'uninstall'], undefined, env)).code, 0);
    t.notOk(existsSync(unitPath));
  });

  await t.test('completion scripts name every command; docs/cli.md lists every command', async (t) => {
    const paths = commandPaths((await builtCli()).program());
    const bash = await inProcess(['completion', 'bash']);
    t.equal(bash.code, 0);
    for (const path of paths) t.match(bash.stdout, `'${path}'`, `bash knows ${path}`);
    const scripts = join(tempDir(t, 'agt-cli-completion-'), 'agt.bash');
    writeFileSync(scripts, bash.stdout);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${scripts}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _agt; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      )
        .trim()
        .split(' ');
    t.same(complete(['agt', 'mc']), ['mcp']);
    t.ok(complete(['agt', 'mcp', '']).includes('install'), 'subcommands of a group');
    t.ok(complete(['agt', 'ps', '--a']).includes('--all'), 'options of an alias');
    t.ok(complete(['agt', 'credentials', 'set', '--r']).includes('--replace'));
    const fish = await inProcess(['completion', 'fish']);
    for (const path of paths) t.match(fish.stdout, `-a '${path.split(' ').at(-1)}'`, `fish knows ${path}`);
    const zsh = await inProcess(['completion', 'zsh']);
    t.match(zsh.stdout, /^#compdef agt\n/);
    for (const [shell, text] of [
      ['fish', fish.stdout],
      ['zsh', zsh.stdout],
    ] as const) {
      if (spawnSync(shell, ['--version']).status !== 0) continue;
      const file = join(tempDir(t, 'agt-cli-completion-'), `agt.${shell}`);
      writeFileSync(file, text);
      t.equal(spawnSync(shell, ['-n', file]).status, 0, `${shell} parses it`);
    }
    t.equal((await inProcess(['completion', 'tcsh'])).code, 2);

    // A command is documented when a code span of docs/cli.md starts with `agt <its first word>` and holds
    // its other words in order (`agt identity [status|create]` documents both subcommands).
    const spans = [...readFileSync(join(ROOT, 'docs/cli.md'), 'utf8').matchAll(/`agt ([^`]+)`/g)].map((m) =>
      m[1]!.split(/[\s|[\]()\\]+/).filter(Boolean),
    );
    const documented = (words: string[]) =>
      spans.some(
        (span) =>
          span[0] === words[0] &&
          words
            .slice(1)
            .every((word, i, rest) => span.indexOf(word, 1) > (i === 0 ? 0 : span.indexOf(rest[i - 1]!, 1))),
      );
    t.notOk(documented(['mcp', 'frobnicate']), 'the check refuses an undocumented command');
    const missing = paths.filter((path) => !documented(path.split(' ')));
    t.same(missing, [], 'every command of agt is in docs/cli.md (add a row to its Commands table for a new one)');
  });

  await t.test('refusals: no daemon 3, wrong token 4', async (t) => {
    t.equal((await inProcess(['--url', 'http://127.0.0.1:9', 'tracked'])).code, 3);
    const wrong = await inProcess(['--url', d.url, '--token', 'nope', '--json', 'mcp', 'ls']);
    t.equal(wrong.code, 4);
    t.match(JSON.parse(wrong.stderr), { exitCode: 4 });
  });

  await t.test('daemon stop ends the daemon and waits until it is gone', async (t) => {
    const stopped = await json('daemon', 'stop');
    t.match(stopped, { stopped: true, accepted: true, pid: d.child.pid });
    t.equal(await d.exited, 0, 'the daemon exited cleanly');
    t.equal((await agt('daemon', 'stop')).code, 3, 'nothing answers any more');
  });
});
