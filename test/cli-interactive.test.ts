/**
 * `agt chat` in a real terminal against the built daemon: a pseudo-terminal through tmux (a private server on its own
 * socket, killed at the end). The user types a message, the agent calls a restricted tool, the inline prompt asks for
 * the approval, Enter approves, and the streamed reply appears; a question of the agent is answered inline; an MCP
 * server's elicitation (a real SDK server, test/fixtures/mcp/sdk-server.mjs) is asked as its form, field by field, and
 * the server gets the values; `/exit` leaves with code 0.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ROOT, tempDir } from './helpers/daemon.js';
import { wireDaemon } from './helpers/wire-daemon.js';

const run = promisify(execFile);
const TMUX = '/usr/bin/tmux';
/** How long the screen may take to show what is awaited before the test fails (not a timing target). */
const FAILSAFE_MS = 20_000;

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

t.test(
  'an approval answered through the interactive prompt',
  { skip: existsSync(TMUX) ? false : `${TMUX} is not installed` },
  async (t) => {
    const h = await wireDaemon(t, {
      settings: {
        mcpServers: [
          {
            name: 'asker',
            type: 'command',
            command: process.execPath,
            args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
          },
        ],
      },
    });
    const id = await h.agent({
      name: 'alpha',
      tools: [{ name: 'fs_write', enabled: true, restricted: true }],
      mcp: { servers: [{ name: 'asker', transport: 'stdio' }] },
    });
    const dir = tempDir(t, 'agt-tmux-');
    const socket = join(dir, 'sock');
    const tmux = (...args: string[]) =>
      run(TMUX, ['-S', socket, ...args], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', HOME: dir } });
    const command = [
      `AGT_DAEMON_URL=${quote(h.d.url)}`,
      `AGT_DAEMON_TOKEN=${quote(h.d.token)}`,
      `${quote(process.execPath)} ${quote(join(ROOT, 'bin/agt.mjs'))} chat alpha`,
      '; echo "agt exited with $?"; sleep 60',
    ].join(' ');
    await tmux('new-session', '-d', '-x', '160', '-y', '40', command);
    t.teardown(() => tmux('kill-server').catch(() => {}));

    const screen = async () => (await tmux('capture-pane', '-p', '-J')).stdout;
    const waitForScreen = async (pattern: RegExp, what: string) => {
      const deadline = Date.now() + FAILSAFE_MS;
      for (;;) {
        const text = await screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline)
          throw new Error(`failsafe: no ${what} on the screen within ${FAILSAFE_MS} ms:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    await waitForScreen(/you/, 'input prompt');
    h.model.push(
      { toolCalls: [{ name: 'fs_write', args: { path: 'notes.txt', content: 'from the terminal' } }] },
      { text: 'I wrote notes.txt for you' },
    );
    await tmux('send-keys', '-t', '0', '-l', 'please write the notes');
    await tmux('send-keys', '-t', '0', 'Enter');
    const asked = await waitForScreen(/alpha wants to run fs_write/, 'approval prompt');
    t.match(asked, /Approve/);
    t.match(asked, /Deny/);
    t.match(asked, /"path":"notes.txt"/);
    const requested = await h.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === id);
    await tmux('send-keys', '-t', '0', 'Enter');
    const replied = await waitForScreen(/I wrote notes\.txt for you/, 'streamed reply');
    t.match(replied, /✓ fs_write \(\d+ ms\): wrote notes\.txt \(17 bytes\)/, 'the tool result, compactly');
    const task = (await h.d.request('GET', `/agents/${id}/tasks/${(requested.payload as { taskId: string }).taskId}`))
      .body;
    t.match(task, { status: 'completed', resolution: { action: 'approve' } });
    t.equal((await h.d.request('GET', `/agents/${id}/files/content?path=notes.txt`)).body.content, 'from the terminal');

    await waitForScreen(/I wrote notes\.txt for you[\s\S]*\? you\s*$/, 'next input prompt');

    // A question of the agent (the ask tool) is asked inline too; the typed answer reaches the model.
    h.model.push(
      { toolCalls: [{ name: 'ask', args: { question: 'Which colour do you like?' } }] },
      { text: 'Noted: teal.' },
    );
    await tmux('send-keys', '-t', '0', '-l', 'pick a colour');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/alpha asks: Which colour do you like\?/, 'ask prompt');
    await tmux('send-keys', '-t', '0', '-l', 'teal');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/Noted: teal\.[\s\S]*\? you\s*$/, 'reply after the answer');
    const answered = h.model.calls
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .at(-1) as { content: string };
    t.match(answered.content, /teal/);

    // An MCP server's form: its fields asked one by one (an enum as a choice, a default kept by Enter).
    h.model.push({ toolCalls: [{ name: 'mcp_asker_signup', args: {} }] }, { text: 'Signed up.' });
    await tmux('send-keys', '-t', '0', '-l', 'sign me up');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/alpha asks: MCP server asker \(during tool signup\) asks: Which account/, 'form prompt');
    await waitForScreen(/Fill in the form/, 'the choice to fill it in');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/Email \(where the invoice goes\)/, 'the email field');
    await tmux('send-keys', '-t', '0', '-l', 'owner@example.com');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/plan \(optional\)[\s\S]*pro/, 'the plan choices');
    await tmux('send-keys', '-t', '0', 'Down');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/seats \(optional\)/, 'the seats field');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/newsletter \(optional\)[\s\S]*yes/, 'the newsletter choice');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/Signed up\.[\s\S]*\? you\s*$/, 'reply after the form');
    const signed = h.model.calls
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .at(-1) as { content: string };
    t.same(
      JSON.parse(signed.content.slice(signed.content.indexOf('{'), signed.content.lastIndexOf('}') + 1)),
      { action: 'accept', content: { email: 'owner@example.com', plan: 'pro', seats: 1, newsletter: true } },
      'the server got the values',
    );
    await tmux('send-keys', '-t', '0', '-l', '/exit');
    await tmux('send-keys', '-t', '0', 'Enter');
    await waitForScreen(/agt exited with 0/, 'exit code 0');
  },
);
