/**
 * The README and the docs pages it leads to, walked as a new user walks them, against the built daemon with
 * the shipped extensions.json and a fresh HOME: the commands are read out of the Markdown itself (so an edit
 * that breaks an example breaks this test) and run in order, the way a user types them.
 *
 * 1. The README's quick start (`agt`), then the first session of docs/cli.md: each `agt` line through the
 *    CLI's main (dist/cli), finding the daemon in ~/.config/agt as a user's `agt` does; then `agt usage` by
 *    name, and `agt extensions config` (the example of docs/channels.md) leaving the shipped
 *    extensions.json byte-identical.
 * 2. The quick start over HTTP and the stored files (docs/http-api.md) through bash and curl on a second
 *    daemon, then the costs block of docs/costs.md with the same variables, then the MCP-client example of
 *    docs/mcp.md: its settings call and the client configuration (`agt mcp serve` spawned from that JSON)
 *    on the quick start's Helper. Only what a user at this machine changes is changed: the API address (the
 *    daemon binds a free port), the Ollama address (a fake OpenAI-format model), and a passphrase file for
 *    the prompt.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

/**
 * The fenced blocks (` ```sh ` or ` ```json `) of the section of `page` (README.md, docs/…) that starts with
 * `heading`.
 */
function blocks(page: string, heading: string, lang: string): string[] {
  const level = heading.split(' ')[0]!.length;
  const found: string[] = [];
  let inSection = false;
  let fence: string[] | undefined;
  let fenceLang = '';
  for (const line of readFileSync(join(ROOT, page), 'utf8').split('\n')) {
    if (fence) {
      if (line.startsWith('```')) {
        if (inSection && fenceLang === lang) found.push(fence.join('\n'));
        fence = undefined;
      } else fence.push(line);
      continue;
    }
    if (line.startsWith('```')) {
      fence = [];
      fenceLang = line.slice(3).trim();
      continue;
    }
    // A heading outside a fence (a `#` comment inside one is no heading) ends the section at its level.
    const heading_ = /^(#+) /.exec(line);
    if (heading_ && line === heading) inSection = true;
    else if (heading_ && heading_[1]!.length <= level) inSection = false;
  }
  if (found.length === 0) throw new Error(`${page} has no ${lang} block under ${heading}`);
  return found;
}

/** A command line's words as a POSIX shell splits them (quotes, no expansion), up to an unquoted `#` comment. */
function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '#' && word === undefined) break;
    if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === '"' || c === "'") {
      const close = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** `agt` on the PATH as `npm link` puts it there: this checkout's bin/agt.mjs. */
function agtOnPath(t: Parameters<typeof tempDir>[0]): string {
  const bin = tempDir(t, 'agt-readme-bin-');
  writeFileSync(
    join(bin, 'agt'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(ROOT, 'bin/agt.mjs'))} "$@"\n`,
  );
  chmodSync(join(bin, 'agt'), 0o755);
  return bin;
}

/** A user's shell: HOME, and none of the daemon's variables (so agt looks in ~/.config/agt). */
const userShell = (home: string) => ({
  HOME: home,
  XDG_CONFIG_HOME: '',
  AGT_DAEMON_SETTINGS: '',
  AGT_USER_DATA_DIR: '',
  AGT_DAEMON_URL: '',
  AGT_DAEMON_HOST: '',
  AGT_DAEMON_PORT: '',
  AGT_DAEMON_TOKEN: '',
});

t.test('the quick start with agt, line by line, then usage and extension options', async (t) => {
  const model = await startFakeOpenAI(t, () => reply.text('I can read and write files, and answer questions.'), {
    models: ['llama3.2'],
  });
  const home = tempDir(t, 'agt-readme-home-');
  const d = await runDaemon(t, { dataDir: join(home, '.config', 'agt'), env: { HOME: home } });
  t.ok(d.url, d.stderr());
  const passphrase = join(home, 'passphrase.txt');
  writeFileSync(passphrase, 'correct horse battery staple\n', { mode: 0o600 });
  const shipped = readFileSync(join(ROOT, 'extensions.json'));

  const [quickStart] = blocks('README.md', '## Quick start', 'sh');
  const [firstSession] = blocks('docs/cli.md', '## A first session', 'sh');
  const ran: string[] = [];
  for (const line of `${quickStart}\n${firstSession}`.split('\n')) {
    let argv = words(line);
    if (argv[0] === 'eval') argv = words(/"\$\((.*)\)"/.exec(line)![1]!);
    if (argv[0] !== 'agt') continue; // npm link and agtd: the daemon runs already
    const args = argv.slice(1);
    // An interactive chat and the live event stream wait for a person; the one-message chat is tried below.
    if ((args[0] === 'chat' && !args.includes('-m')) || args[0] === 'events') continue;
    if (args.join(' ') === 'identity create') args.push('--passphrase-file', passphrase);
    if (args[0] === 'providers' && args[1] === 'add') args.push('--base-url', model.baseUrl);
    const run = await agtInProcess(args, userShell(home));
    t.equal(run.code, 0, `agt ${args.join(' ')}: ${run.stderr}${run.stdout.slice(0, 400)}`);
    ran.push(args.slice(0, 2).join(' '));
    if (args[0] === 'chat') t.match(run.stdout, /I can read and write files/, 'the reply is printed');
    if (args.join(' ') === `identity create --passphrase-file ${passphrase}`)
      t.match(run.stdout, /(\w+ ){11}\w+/, 'the seed phrase, once');
    if (args[0] === 'status') t.match(run.stdout, /Helper/);
  }
  t.same(
    ran,
    [
      'identity create',
      'identity confirm-backup',
      'providers add',
      'providers check',
      'create Helper',
      'chat Helper',
      'approvals',
      'status',
      'tools Helper',
      'inspect Helper',
      'ps -a',
      'service install',
      'completion bash',
    ],
    'every agt line of the quick start and the first session ran',
  );
  t.ok(existsSync(join(home, 'Documents/agt-agents/helper.agt')), 'the file where the quick start says');

  // Costs: the usage table names the agent; one agent's usage by its name.
  const usage = await agtInProcess(['usage'], userShell(home));
  t.match(usage.stdout, /\nHelper\s+1\s/, `by agent, named: ${usage.stdout}`);
  const one = await agtInProcess(['usage', 'Helper'], userShell(home));
  t.equal(one.code, 0, one.stderr);
  t.match(one.stdout, /^\s*CALLS.*\nHelper\s+1\s/);

  // Channels: the owner's option change goes to the data directory; the shipped manifest stays as it is.
  const channels = readFileSync(join(ROOT, 'docs/channels.md'), 'utf8');
  const line = /`(agt extensions config channels --set [^`]+)`/.exec(channels)![1]!;
  const set = await agtInProcess(words(line).slice(1), userShell(home));
  t.equal(set.code, 0, set.stderr);
  t.ok(readFileSync(join(ROOT, 'extensions.json')).equals(shipped), 'extensions.json is byte-identical');
  const overlay = JSON.parse(readFileSync(join(d.dataDir, 'extensions.config.json'), 'utf8'));
  t.equal(overlay.extensions.channels.config.types.telegram.apiRoot, 'http://127.0.0.1:8081');
  const again = await d.restart();
  const view = await again.request('GET', '/runtime/extensions/channels/config');
  t.match(
    view.body,
    {
      source: 'overlay',
      config: { types: { telegram: { apiRoot: 'http://127.0.0.1:8081' } } },
      effective: { types: { telegram: { apiRoot: 'http://127.0.0.1:8081' } } },
    },
    'after a restart the overlay is in force',
  );
  t.match(
    (await again.request('GET', '/runtime/extensions/compute/config')).body,
    { source: 'manifest' },
    "the others run with the manifest's",
  );
  t.ok(readFileSync(join(ROOT, 'extensions.json')).equals(shipped), 'still byte-identical');
});

t.test('the quick start over HTTP, stored files, costs, then the MCP-client example on its Helper', async (t) => {
  // The first message asks for a restricted tool (an approval), so the next chat's interruption shows.
  const model = await startFakeOpenAI(
    t,
    (request) => {
      const messages = request.body.messages as Array<{ role: string; content: unknown }>;
      const last = messages.at(-1)!;
      const text = String(last.content);
      if (last.role === 'user' && text.includes('Hello! What can you do?') && !text.includes('And in one line?')) {
        return reply.toolCalls([{ name: 'fs_delete', args: { path: 'notes/old.txt' } }]);
      }
      if (text.includes('Use msg_send')) return reply.text('ok');
      return reply.text('I help, in one line.');
    },
    { models: ['llama3.2'] },
  );
  const home = tempDir(t, 'agt-readme-home-');
  const d = await runDaemon(t, { dataDir: join(home, '.config', 'agt'), env: { HOME: home } });
  t.ok(d.url, d.stderr());
  const bin = agtOnPath(t);
  const work = tempDir(t, 'agt-readme-sh-');

  const [curlStart] = blocks('docs/http-api.md', '## The quick start over HTTP', 'sh');
  const [files] = blocks('docs/http-api.md', "## Agents' stored files", 'sh');
  const [costs] = blocks('docs/costs.md', '## In short', 'sh');
  const [exposeAgents] = blocks('docs/mcp.md', '## agt as an MCP server', 'sh');
  const [clientConfig] = blocks('docs/mcp.md', '## agt as an MCP server', 'json');
  // The user's own addresses: this daemon's port, the model server in place of Ollama.
  const script = [curlStart!, files!, costs!, exposeAgents!]
    .join('\n')
    .replace(/^API=http:\/\/127\.0\.0\.1:7385$/m, `API=${d.url}`)
    .replaceAll('http://127.0.0.1:11434/v1', model.baseUrl)
    .replaceAll('http://127.0.0.1:7385/', `${d.url}/`);
  t.notMatch(script, /127\.0\.0\.1:(7385|11434)/, 'every address was replaced');
  // Each curl prints its status after its body; the event stream (`curl -sN … &`, a job of its own: exec
  // makes the job curl itself, so the trap's kill ends it) goes to a file. A failing command stops the walk.
  const events = join(work, 'events.txt');
  const prelude = `set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\ncurl() { case "$*" in *-sN*) exec curl "$@" >${JSON.stringify(events)} 2>&1;; *) command curl -w '\\n<<%{http_code}>>\\n' "$@";; esac; }\n`;
  // Not spawnSync: the model server runs in this process and must answer while the walk runs.
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn('bash', ['-c', `${prelude}${script}\n`], {
      env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
  t.equal(run.status, 0, run.stderr);
  const answers = run.stdout.split(/\n<<(\d+)>>\n/);
  const statuses = answers.filter((_, i) => i % 2 === 1).map(Number);
  const bodies = answers.filter((_, i) => i % 2 === 0).map((text) => text.trim());
  t.same(
    statuses.filter((status) => status >= 400),
    [],
    `no curl of the walk was refused: ${run.stdout.slice(0, 3000)}`,
  );
  const body = (i: number) => JSON.parse(bodies[i]!);
  t.match(body(0), { seedPhrase: String }, 'identity created');
  t.equal(statuses[2], 201, 'Helper created');
  t.match(body(3), { accepted: true, turnId: String });
  // The second chat interrupts the first (before its model call, or at its approval: the timing is the
  // machine's), and answers for both.
  t.match(
    body(4),
    { status: 'completed', text: 'I help, in one line.' },
    'the waiting chat answers once its turn ended',
  );
  t.match(body(8), { tasks: [] }, 'nothing is left waiting for the owner');
  t.match(readFileSync(events, 'utf8'), /"stop_reason":"interrupted"/, 'the stream showed the first turn interrupted');
  const exposed = bodies.findIndex((text) => text.includes('"key":"mcpServer"'));
  const exposedBody = bodies[exposed]!.slice(bodies[exposed]!.lastIndexOf('\n') + 1); // after agt approvals' output
  t.match(
    JSON.parse(exposedBody),
    { key: 'mcpServer', value: { agents: ['bob', 'helper'] } },
    'the MCP example set mcpServer',
  );
  t.equal(statuses[exposed], 200);
  t.match(run.stdout, /https?:\/\/\S+\/console\/\S+/, 'agt console printed its login link');

  // The client configuration as written: `agt mcp serve` spawned from it, exposing the quick start's Helper.
  const server = JSON.parse(clientConfig!).mcpServers.agt;
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'readme-walk', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const listed = (await client.callTool({ name: 'list_agents', arguments: {} })) as unknown as {
    structuredContent: { agents: Array<{ name: string }> };
  };
  t.same(
    listed.structuredContent.agents.map((agent: { name: string }) => agent.name),
    ['Helper'],
    '"helper" in mcpServer.agents exposes the agent named Helper (there is no bob)',
  );
  const chat = await client.callTool({ name: 'chat', arguments: { agent: 'helper', text: 'From my editor: hi' } });
  t.match(chat.structuredContent, { status: 'completed', reply: 'I help, in one line.' }, JSON.stringify(chat));

  // What the quick start's comment says, at the approval: a chat while the turn waits for one cancels it.
  const log = await eventLog(t, d);
  const first = await d.request('POST', '/agents/Helper/chat', { text: 'Hello! What can you do?' });
  const asked = await log.waitFor(
    (event) => event.event_type === 'hil.requested' && event.turn_id === first.body.turnId,
    'the approval',
  );
  const next = await d.request('POST', '/agents/Helper/chat?wait=true', { text: 'And in one line?' });
  t.match(next.body, { status: 'completed', text: 'I help, in one line.' });
  const taskId = (asked.payload as { taskId: string }).taskId;
  const resolved = await log.waitFor(
    (event) => event.event_type === 'hil.resolved' && (event.payload as { id: string }).id === taskId,
    'the approval resolved',
  );
  t.match(
    resolved.payload,
    { kind: 'approval' },
    `the approval was resolved by the interruption (${JSON.stringify(resolved.payload)})`,
  );
  t.same((await d.request('GET', '/tasks')).body.tasks, [], 'and is no longer waiting');
});
