/**
 * The console in a real headless Chromium (Debian's `chromium`, driven by playwright-core) against one built daemon
 * (the shipped extensions, compute off) and a scripted model (a fake OpenAI-format server), used as a person uses it:
 * login by one-time URL and by token, the fleet following the event stream (and a fleet of 1,000 agents: first screen,
 * rows in the DOM, search, sort, scroll), a chat sent from the keyboard with its reply streamed, tool calls as cards,
 * an ask answered inline, two approvals answered together in the inbox from the keyboard at 390 px, credentials, the
 * agent's memory (added, pinned, searched on words only and then by meaning, forgotten; recalled in the chat and the
 * timeline), loops and timers edited, a backup, the config's form from its schema and its diff, a budget raised and a
 * tool always allowed inline, a real MCP server's elicitation as a form from its schema and a call waiting for its
 * server to confirm a URL elicitation, eval runs (listed live, a
 * run's variants and cases, two runs' answers side by side, cancel), the channels and mesh panels, an MCP OAuth sign-in
 * and sign-out from the System view (a real OAuth fixture server), the events backlog and names, the identity unlocked
 * from the header, extension options, the CSP header, no uncaught page error, and axe-core (no serious or critical violation) on every
 * view in light and dark at 1280 and 390 px. AGT_UPDATE_SCREENSHOTS=1 saves those views into docs/console/. Skips,
 * saying why, when Chromium is not installed or cannot start.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ServerResponse } from 'node:http';
import { startFakeEmbedder } from './fakes/embedder.js';
import { reply, startFakeOpenAI, type FakeReply, type RecordedRequest } from './fakes/openai.js';
import { startSse } from './fakes/server.js';
import { createAgentFile } from './helpers/agent-file.js';
import { importFile, ROOT, runDaemon, shippedManifest, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog, type EventLog } from './helpers/events.js';
import { startOAuthFixture } from './helpers/oauth-fixture.js';
import { endsTurn } from './helpers/wire-daemon.js';
import {
  axeSerious,
  checkView,
  everyLook,
  fleetOf,
  freePort,
  launch,
  scrollFrames,
  serveAgents,
} from './helpers/console-browser.js';

/** A model whose each call the test scripts as a function of the request (a fake OpenAI-format server). */
class PlayedModel {
  readonly plays: Array<(request: RecordedRequest) => FakeReply | Promise<FakeReply>> = [];
  readonly script = (request: RecordedRequest) => (this.plays.shift() ?? (() => reply.text('ok')))(request);
}

/** A streamed reply that sends `first`, waits for `held`, then sends `rest` (Chat Completions chunks). */
function streamedInTwo(first: string, held: Promise<void>, rest: string): FakeReply {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-two', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return {
    type: 'custom',
    async handle(request: RecordedRequest, res: ServerResponse) {
      startSse(res);
      res.write(chunk({ role: 'assistant', content: first }));
      await Promise.race([held, request.done]);
      res.write(chunk({ content: rest }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    },
  };
}

t.test(
  'console sessions: single-use codes that expire, digests only on disk (0600), revocation persisted',
  async (t) => {
    const { ConsoleSessions, CODE_TTL_MS, SESSION_IDLE_MS } = await importFile<
      typeof import('../extensions/console/sessions.js')
    >(join(ROOT, 'extensions/console/sessions.ts'));
    const file = join(tempDir(t, 'agt-console-sessions-'), 'console', 'sessions.json');
    let now = 1_000_000;
    const store = new ConsoleSessions(file, () => now);
    const { code } = store.mintCode();
    t.ok(store.redeem(code));
    t.notOk(store.redeem(code), 'a code works once');
    const late = store.mintCode().code;
    now += CODE_TTL_MS;
    t.notOk(store.redeem(late), 'an expired code is refused');
    const { secret, session } = store.open('code', 'test');
    const kept = store.open('token', null);
    const text = readFileSync(file, 'utf8');
    t.notOk(text.includes(secret) || text.includes(kept.secret), 'the file holds no session secret');
    t.equal(statSync(file).mode & 0o777, 0o600);
    const reopened = new ConsoleSessions(file, () => now);
    t.equal(reopened.touch(secret)?.id, session.id, 'a session survives a restart');
    t.ok(reopened.revoke(session.id));
    t.equal(
      new ConsoleSessions(file, () => now).touch(secret),
      undefined,
      'a revoked session stays revoked after a restart',
    );
    now += SESSION_IDLE_MS;
    t.equal(reopened.touch(kept.secret), undefined, 'an idle session expires');
  },
);

const browserOrSkip = await launch();
const skip = typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(skip);

t.test('the console in headless Chromium', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const uiDir = tempDir(t, 'agt-console-ui-');
  const { buildConsole } = (await import(pathToFileURL(join(ROOT, 'scripts/build-console.mjs')).href)) as {
    buildConsole(dir: string): Promise<number>;
  };
  const gzipped = await buildConsole(uiDir);
  t.ok(gzipped <= 150 * 1024, `UI is ${gzipped} bytes gzipped (budget 150 KB)`);

  // A fixed port and data folder, so the restarted daemon is the same origin with the same sessions file.
  const dataDir = tempDir(t, 'agt-console-data-');
  const agentsDir = tempDir(t, 'agt-console-agents-');
  const port = await freePort();
  const model = new PlayedModel();
  const fake = await startFakeOpenAI(t, model.script);
  // Memory search by meaning, once the Memory tab turns it on (settings memory.embeddings).
  const embedder = await startFakeEmbedder(t);
  const { extensions } = shippedManifest({ console: { uiDir }, providers: { maxRetries: 0 } });
  let d: SpawnedDaemon = await runDaemon(t, {
    dataDir,
    env: { AGT_DAEMON_PORT: String(port) },
    settings: {
      agentsFolder: agentsDir,
      providers: [
        { id: 'local', type: 'openai-compatible', name: 'Fake OpenAI', baseUrl: fake.baseUrl },
        embedder.provider,
      ],
    },
    extensions: {
      extensions: extensions.map((entry: any) => (entry.name === 'compute' ? { ...entry, enabled: false } : entry)),
    },
  });
  t.ok(d.url, `the daemon started: ${d.stderr()}`);
  // Every event from the start, so a wait for a turn that ended before its id was known still resolves.
  let log: EventLog = await eventLog(t, d);
  const turnEnded = (turnId: string) => log.waitFor((e) => endsTurn(e, turnId), `the end of turn ${turnId}`);
  const files = new Map<string, string>();
  const load = async (config: Record<string, unknown>) => {
    const filePath = files.get(String(config.name)) ?? (await createAgentFile(agentsDir, config));
    files.set(String(config.name), filePath);
    const res = await d.request('POST', '/agents/load', { filePath });
    if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };

  let context: BrowserContext;
  /** Console messages of the page about its CSP: the console must run under its own policy. */
  const cspViolations: string[] = [];
  /** Uncaught errors of the page (a daemon restart once gave one): none are expected. */
  const pageErrors: string[] = [];
  let page: Page;

  await t.test('logging in with the one-time URL: an HttpOnly cookie, nothing in the URL or storage', async (t) => {
    // The link as a person gets it: from `agt console`.
    const printed = await new Promise<string>((done, fail) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin/agt.mjs'), 'console'], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: '/nonexistent',
          NO_COLOR: '1',
          AGT_DAEMON_URL: d.url,
          AGT_DAEMON_TOKEN: d.token,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.once('error', fail);
      child.once('close', (code) => (code === 0 ? done(out) : fail(new Error(`agt console exited ${code}`))));
    });
    const link = /^(http:\/\/\S+\/console\/#code=([A-Za-z0-9_-]+))$/m.exec(printed);
    t.ok(link, 'agt console printed the link');
    t.notOk(printed.includes(d.token), 'the link does not carry the daemon token');
    const minted = { body: { path: new URL(link![1]!).pathname + new URL(link![1]!).hash, code: link![2]! } };
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    page = await context.newPage();
    // Waits on the DOM end well within this when the console works; a failure says where it stopped.
    page.setDefaultTimeout(10_000);
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const response = await page.goto(`${d.url}${minted.body.path}`);
    const csp = response!.headers()['content-security-policy'] ?? '';
    t.match(csp, /script-src 'self'/, 'CSP header present');
    t.match(csp, /frame-ancestors 'none'/);
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    t.notMatch(page.url(), /code=/, 'the code left the address bar');
    const [cookie] = await context.cookies();
    t.match(cookie, { name: 'agt_console', httpOnly: true, sameSite: 'Strict' });
    t.same(await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length]), ['', 0, 0]);
    t.notOk((await page.content()).includes(d.token), 'the daemon token is nowhere in the page');
    const reused = await fetch(`${d.url}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: minted.body.code }),
    });
    t.equal(reused.status, 401, 'the code is single use');
    // The session cookie counts only with the console header, and never past the Host / Origin guards.
    const jar = `agt_console=${cookie!.value}`;
    const asConsole = (headers: Record<string, string>) =>
      fetch(`${d.url}/agents`, { headers: { cookie: jar, ...headers } }).then((r) => r.status);
    t.equal(await asConsole({ 'x-agt-console': '1' }), 200);
    t.equal(await asConsole({}), 401, 'no console header: refused');
    t.equal(await asConsole({ 'x-agt-console': '1', origin: 'http://evil.example' }), 403, 'foreign Origin: refused');
    t.equal(
      await asConsole({ 'x-agt-console': '1', 'sec-fetch-site': 'cross-site' }),
      403,
      'cross-site fetch: refused',
    );
    // fetch cannot set Host: a plain HTTP request can (DNS rebinding names another host).
    const rebound = await new Promise<number>((done, fail) => {
      const url = new URL('/agents', d.url);
      request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: { host: 'evil.example', cookie: jar, 'x-agt-console': '1' },
        },
        (res) => (res.resume(), done(res.statusCode!)),
      )
        .on('error', fail)
        .end();
    });
    t.equal(rebound, 403, 'foreign Host: refused');
  });

  await t.test('logging in with the token; the session is listed and revoked', async (t) => {
    const other = await browser.newContext();
    const tab = await other.newPage();
    await tab.goto(`${d.url}/console/`);
    await tab.getByLabel('Daemon token').waitFor();
    await everyLook(t, tab, 'login', () => tab.getByLabel('Daemon token').waitFor());
    await tab.getByLabel('Daemon token').fill(d.token);
    await tab.getByRole('button', { name: 'Log in' }).click();
    await tab.getByRole('heading', { name: 'Fleet' }).waitFor();
    t.same(await tab.evaluate(() => [localStorage.length, sessionStorage.length]), [0, 0]);
    t.notOk((await tab.content()).includes(d.token));
    const listed = (await d.request('GET', '/console/sessions')).body.sessions as Array<{ id: string; via: string }>;
    t.same(listed.map((s) => s.via).sort(), ['code', 'token']);
    const tokenSession = listed.find((s) => s.via === 'token')!;
    t.equal((await d.request('DELETE', `/console/sessions/${tokenSession.id}`)).status, 200);
    const after = await tab.evaluate(() =>
      fetch('/agents', { headers: { 'x-agt-console': '1' } }).then((r) => r.status),
    );
    t.equal(after, 401, 'a revoked session is refused');
    // The open event stream may already have ended the page's session (its reconnect is refused);
    // else the next request does.
    await tab
      .locator('nav a[href="#/inbox"]')
      .click({ timeout: 2000 })
      .catch(() => undefined);
    await tab.getByRole('alert').filter({ hasText: 'Your console session ended' }).waitFor();
    t.pass('the page goes back to its login form, saying why');
    await other.close();
  });

  await t.test(
    'an agent loaded through the API appears in the fleet within a second; names render as text',
    async (t) => {
      let begun = 0;
      await load({ name: 'fleet-one', tools: [{ name: 'fs_write', enabled: true, restricted: true }] }).then(
        () => (begun = Date.now()),
      );
      await page.getByRole('link', { name: 'fleet-one' }).waitFor({ timeout: 1000 });
      t.ok(Date.now() - begun < 1000, `shown ${Date.now() - begun} ms after the load answered`);
      const evil = '<img src=x onerror="window.__xss=1">';
      await load({ name: evil });
      await page.getByRole('link', { name: evil }).waitFor({ timeout: 1000 });
      t.equal(await page.locator('main img').count(), 0, 'no img element was made');
      t.equal(await page.evaluate(() => (window as any).__xss), undefined, 'no script ran');
      // Create from a template through the form (an agent's identity is sealed to the owner's: make one).
      t.equal((await d.request('POST', '/identity/create', { passphrase: 'console test passphrase' })).status, 201);
      await page.getByLabel('Name', { exact: true }).fill('made-here');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByRole('link', { name: 'made-here' }).waitFor();
      await checkView(t, page, 'fleet');
    },
  );

  await t.test('a chat reply streams in', async (t) => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    model.plays.push(() => streamedInTwo('Hello ', held, 'from the model'));
    await page.getByRole('link', { name: 'fleet-one' }).click();
    await page.getByRole('heading', { name: 'fleet-one' }).waitFor();
    // Keyboard only: from the conversation, Tab to the message box, type, Enter sends.
    await page.locator('.chat-log').focus();
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.id)) !== 'message'; i++)
      await page.keyboard.press('Tab');
    await page.keyboard.type('hi there');
    await page.keyboard.press('Enter');
    await page.locator('ol.live .msg.streaming', { hasText: 'Hello' }).waitFor();
    t.pass('the first delta is on the page before the reply ended');
    release();
    await page.locator('ol.live .msg-assistant:not(.streaming)', { hasText: 'Hello from the model' }).waitFor();
    t.equal(await page.locator('.msg.streaming').count(), 0);
    await checkView(t, page, 'agent');
  });

  await t.test('agent details: the durable conversation, a file uploaded and viewed, a refused config', async (t) => {
    await page.getByRole('button', { name: 'History' }).click();
    await page
      .locator('section[aria-labelledby="details-title"] table.history tr', { hasText: 'hi there' })
      .first()
      .waitFor();
    t.pass('the conversation from GET /agents/{id}/loop shows the first message');
    await page.getByRole('button', { name: 'Files' }).click();
    await page
      .getByLabel('Upload a file')
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded <b>text</b>') });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('button', { name: 'View notes.txt' }).click();
    await page.locator('pre', { hasText: 'uploaded <b>text</b>' }).waitFor();
    t.equal(await page.locator('main b').count(), 0, 'file content shown as text');
    // An image is previewed in the page (a data: URL the policy allows for images).
    const dot = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    await page.getByLabel('Upload a file').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: dot });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('button', { name: 'View dot.png' }).click();
    const preview = page.getByRole('img', { name: 'Preview of dot.png' });
    await preview.waitFor();
    await page.waitForFunction(
      () => (document.querySelector('img.preview') as HTMLImageElement | null)?.naturalWidth === 1,
    );
    t.pass('the PNG decoded in the page');
    // Loops: main listed; an inner loop added (not started), its goal edited, turned off, deleted.
    await page.getByRole('button', { name: 'Loops' }).click();
    await page.locator('table.loops tr[data-loop="main"]').waitFor();
    await page.getByLabel('Loop name').fill('digest');
    await page.getByLabel('Goal', { exact: true }).fill('Summarise the day');
    await page.getByLabel('Start now and with the agent').uncheck();
    await page.getByRole('button', { name: 'Add loop' }).click();
    const digest = page.locator('table.loops tr[data-loop="digest"]');
    await digest.filter({ hasText: 'Summarise the day' }).waitFor();
    await digest.getByRole('button', { name: 'Edit goal of digest' }).click();
    await page.getByLabel('Goal of digest').fill('Summarise the week');
    await page.getByRole('button', { name: 'Save goal' }).click();
    await digest.filter({ hasText: 'Summarise the week' }).waitFor();
    await digest.getByRole('button', { name: 'Turn off digest' }).click();
    await digest.getByRole('button', { name: 'Turn on digest' }).waitFor();
    const fleetOne = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    t.match((await d.request('GET', `/agents/${fleetOne}/loops/digest`)).body, {
      goal: 'Summarise the week',
      enabled: false,
      autostart: false,
    });
    await digest.getByRole('button', { name: 'Delete digest' }).click();
    await digest.waitFor({ state: 'detached' });
    // Credential names are a readable list, not JSON.
    await page.getByRole('button', { name: 'Credentials' }).click();
    await page.locator('.listing').filter({ hasNotText: '{' }).waitFor();
    // A credential set from the form: its name listed, its value nowhere in the page; then removed.
    await page.getByLabel('Name', { exact: true }).fill('API_TOKEN');
    await page.getByLabel('Value', { exact: true }).fill('s3cret-value-from-the-form');
    await page.getByRole('button', { name: 'Set credential' }).click();
    await page.getByRole('status').filter({ hasText: 'Set API_TOKEN.' }).waitFor();
    await page.locator('.listing td', { hasText: 'API_TOKEN' }).waitFor();
    t.notOk((await page.content()).includes('s3cret-value-from-the-form'), 'the value is not in the page');
    await page.getByRole('button', { name: 'Remove API_TOKEN' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed API_TOKEN.' }).waitFor();
    // A timer added in words, listed, deleted.
    await page.getByRole('button', { name: 'Timers' }).click();
    await page.getByLabel('Minutes').fill('5');
    await page.getByLabel('Message to the agent').fill('check the inbox');
    await page.getByRole('button', { name: 'Add timer' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Timer added.' })
      .waitFor()
      .catch(async (error) => {
        t.comment(`timers tab: ${await page.locator('section[aria-labelledby="details-title"]').innerText()}`);
        throw error;
      });
    const timerRow = page.locator('table.timers tr', { hasText: 'check the inbox' });
    await timerRow.filter({ hasText: 'every 5 min' }).waitFor();
    const agentNow = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    t.match((await d.request('GET', `/agents/${agentNow}/timers`)).body.timers, [
      { schedule: { mode: 'interval', every_ms: 300_000 }, payload: 'check the inbox' },
    ]);
    // Changed in place: the same timer, every 10 minutes now.
    await timerRow.getByRole('button', { name: /^Edit timer/ }).click();
    await page.getByLabel('Minutes').fill('10');
    await page.getByRole('button', { name: 'Save timer' }).click();
    await page.getByRole('status').filter({ hasText: 'Timer saved.' }).waitFor();
    await timerRow.filter({ hasText: 'every 10 min' }).waitFor();
    t.equal((await d.request('GET', `/agents/${agentNow}/timers`)).body.timers.length, 1, 'replaced, not added');
    await timerRow.getByRole('button', { name: /^Delete timer/ }).click();
    await page.getByText('No timer.').waitFor();
    // Memory: one added from the keyboard (pinned), one the API adds shown as it is saved, pinned and
    // unpinned, a search that says it ran on words only, one forgotten and then in the forgotten list.
    await page.getByRole('button', { name: 'Memory' }).click();
    await page.getByText('No memory yet.').waitFor();
    await page.getByLabel('Text', { exact: true }).focus();
    await page.keyboard.type('Deploys happen on Tuesdays after the standup');
    for (const key of ['Tab', 'Tab', 'Space', 'Tab', 'Enter']) await page.keyboard.press(key);
    await page
      .getByRole('status')
      .filter({ hasText: /^Added memory \d+\.$/ })
      .waitFor();
    const memories = async () =>
      (await d.request('GET', `/agents/${agentNow}/memory`)).body.memories as Array<{
        id: number;
        text: string;
        pinned: boolean;
        source: string;
      }>;
    const tuesday = (await memories()).find((m) => m.text.includes('Tuesdays'))!;
    t.match(tuesday, { pinned: true, source: 'owner' }, 'added pinned from the keyboard');
    await page.locator(`tr[data-memory-id="${tuesday.id}"]`, { hasText: 'pinned' }).waitFor();
    const volvo = (await d.request('POST', `/agents/${agentNow}/memory`, { text: "The owner's car is a red Volvo" }))
      .body.memory.id as number;
    const volvoRow = page.locator(`tr[data-memory-id="${volvo}"]`);
    await volvoRow.filter({ hasText: 'Fact' }).waitFor();
    t.match(await volvoRow.textContent(), /just now.*never/, 'made just now, never used');
    await volvoRow.getByRole('button', { name: `Pin memory ${volvo}` }).click();
    await volvoRow.getByRole('button', { name: `Unpin memory ${volvo}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Unpinned memory ${volvo}.` })
      .waitFor();
    t.equal((await memories()).find((m) => m.id === volvo)!.pinned, false, 'pinned, then unpinned');
    await page.getByLabel('Search memories').fill('red Volvo');
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /^1 found · searched by words only \(full-text\): no embedding model/ })
      .waitFor();
    t.equal(await page.locator('tr[data-memory-id]').count(), 1, 'the search shows its one match');
    await page.getByRole('button', { name: 'Clear search' }).click();
    await page.locator(`tr[data-memory-id="${tuesday.id}"]`).waitFor();
    t.equal(await page.getByLabel('Search memories').inputValue(), '', 'the box is cleared too');
    // With an embedding model, a search by meaning finds the car as an "automobile", and says how it ran.
    // The first search after the change starts the background embedding; the same search again finds it.
    const embedded = log.waitFor(
      (e) =>
        e.event_type === 'memory.embedded' &&
        e.agent_id === agentNow &&
        (e.payload as { pending: number }).pending === 0,
      'the memories embedded',
    );
    t.equal(
      (
        await d.request('PATCH', '/settings', {
          memory: { embeddings: { provider: 'embed', model: 'hash', dimensions: 64 } },
        })
      ).status,
      200,
    );
    await page.getByLabel('Search memories').fill('automobile');
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /searched by words and meaning \(hybrid\)$/ })
      .waitFor();
    await embedded;
    await page.keyboard.press('Enter');
    // Full-text alone finds no "automobile": the car comes first by its vector (the test embedder's synonyms).
    await page
      .locator(`tbody tr[data-memory-id]:first-child[data-memory-id="${volvo}"]`)
      .waitFor()
      .catch(async (error) => {
        t.comment(`memory tab: ${await page.locator('.memory').innerText()}`);
        throw error;
      });
    t.match(await page.locator('.search-mode').textContent(), /^\d+ found · searched by words and meaning \(hybrid\)$/);
    await page.getByRole('button', { name: 'Clear search' }).click();
    await volvoRow.getByRole('button', { name: `Forget memory ${volvo}` }).click();
    await volvoRow.waitFor({ state: 'detached' });
    t.same(
      (await memories()).map((m) => m.id),
      [tuesday.id],
      'forgotten: out of the list',
    );
    await page.getByRole('group', { name: 'Which memories' }).getByRole('button', { name: 'Forgotten' }).click();
    await volvoRow.filter({ hasText: 'red Volvo' }).waitFor();
    await page.getByRole('group', { name: 'Which memories' }).getByRole('button', { name: 'Kept' }).click();
    // A backup made now.
    await page.getByRole('button', { name: 'Backup' }).click();
    await page.getByRole('button', { name: 'Back up now' }).click();
    const saved = await page
      .getByRole('status')
      .filter({ hasText: /^Saved a copy/ })
      .textContent();
    t.match(saved, /\.agt\.$/, `the backup's path is shown: ${saved}`);
    // The config: the JSON view, a diff reviewed before saving, the daemon's refusal shown.
    await page.getByRole('button', { name: 'Config' }).click();
    await page.getByRole('group', { name: 'Config view' }).getByRole('button', { name: 'JSON' }).click();
    const editor = page.getByLabel(/Agent config/);
    await page.waitForFunction(() =>
      (document.getElementById('config') as HTMLTextAreaElement | null)?.value.includes('"name"'),
    );
    const config = JSON.parse(await editor.inputValue());
    await editor.fill(JSON.stringify({ ...config, model: { provider: 5 } }, null, 2));
    await page.getByRole('button', { name: 'Review changes' }).first().click();
    await page.locator('pre.diff .add', { hasText: '"provider": 5' }).waitFor();
    await page.getByRole('button', { name: 'Save config' }).click();
    await page.getByRole('status').filter({ hasText: 'Refused (bad_request)' }).waitFor();
    // The form, generated from the config schema the daemon publishes: a text, a number in its group, a
    // choice offered from the schema's constants; the review shows those lines; saved.
    await page.getByRole('group', { name: 'Config view' }).getByRole('button', { name: 'JSON' }).click();
    await editor.fill(JSON.stringify(config, null, 2));
    await page.getByRole('group', { name: 'Config view' }).getByRole('button', { name: 'Form' }).click();
    await page.getByLabel('Description', { exact: true }).fill('edited in the form');
    const limits = page.getByRole('group', { name: 'Limits' });
    await limits.getByLabel('Max tool calls per turn').fill('21');
    t.ok(
      (await page.getByRole('group', { name: 'Messaging' }).getByLabel('Mode').locator('option').count()) > 2,
      'a choice lists the values the schema allows',
    );
    await page.getByRole('group', { name: 'Config view' }).getByRole('button', { name: 'Review changes' }).click();
    await page.locator('pre.diff .add', { hasText: 'edited in the form' }).waitFor();
    await page.locator('pre.diff .add', { hasText: '"max_tool_calls_per_turn": 21' }).waitFor();
    await page.getByRole('button', { name: 'Save config' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    t.match((await d.request('GET', `/agents/${agentNow}/config`)).body.config, {
      description: 'edited in the form',
      limits: { max_tool_calls_per_turn: 21 },
    });
    // Usage: the tokens by model next to the chart.
    await page.getByRole('button', { name: 'Usage' }).click();
    await page.locator('table.by-model td', { hasText: 'test-model' }).waitFor();
    await checkView(t, page, 'agent-config');
  });

  await t.test("an ask is answered inline in the agent's view and the turn ends", async (t) => {
    const agentId = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    let answer = '';
    model.plays.push(() => reply.toolCalls([{ id: 'call_ask', name: 'ask', args: { question: 'Which colour?' } }]));
    model.plays.push((request) => {
      answer = JSON.stringify(request.body.messages.at(-1));
      return reply.text('blue it is');
    });
    const turnId = (await d.request('POST', `/agents/${agentId}/chat`, { text: 'pick a colour' })).body
      .turnId as string;
    const item = page.getByRole('listitem', { name: 'ask from fleet-one' });
    await item.getByText('Which colour?').waitFor();
    await item.getByLabel('Answer').fill('blue');
    t.equal(await page.getByRole('button', { name: 'Send' }).count(), 1, "one Send button: the chat's");
    await item.getByRole('button', { name: 'Answer' }).click();
    await turnEnded(turnId);
    t.match(answer, /blue/, 'the model got the answer');
    await page.locator('ol.live .msg-assistant', { hasText: 'blue it is' }).waitFor();
    // The ask was a tool call: its card opens from the keyboard and shows the question and the answer.
    const card = page.locator('.tool-card[data-tool="ask"]').last();
    await card.locator('summary').focus();
    await page.keyboard.press('Enter');
    await card.locator('pre', { hasText: 'Which colour?' }).waitFor();
    await card.locator('pre', { hasText: 'blue' }).last().waitFor();
    t.match(await card.textContent(), /done/);
  });

  await t.test("a budget prompt raised inline and a tool call always allowed, in the agent's view", async (t) => {
    const id = await load({
      name: 'thrifty',
      budget: { turn_tokens: 50, on_exceeded: 'ask' },
      tools: [{ name: 'fs_write', enabled: true, restricted: true }],
    });
    await page.evaluate((h) => (location.hash = h), `#/agent/${id}`);
    await page.getByRole('heading', { name: 'thrifty' }).waitFor();
    model.plays.push(() =>
      reply.toolCalls([{ id: 'call_note', name: 'fs_write', args: { path: 'note.md', content: 'kept' } }]),
    );
    model.plays.push(() => reply.text('noted'));
    const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'write a note' })).body.turnId as string;
    const budget = page.getByRole('listitem', { name: 'budget from thrifty' });
    await budget.getByText(/^Over its budget agent\.turn_tokens: limit 50/).waitFor();
    await budget.getByLabel("Raise today's limit by").fill('1000000');
    await budget.getByRole('button', { name: 'Raise', exact: true }).click();
    const approval = page.getByRole('listitem', { name: 'approval from thrifty' });
    await approval.getByRole('button', { name: 'Always allow fs_write' }).click();
    await turnEnded(turnId);
    t.ok(
      log.events.some((e) => e.event_type === 'budget.raised' && e.agent_id === id),
      'the budget was raised from the prompt',
    );
    const tools = (await d.request('GET', `/agents/${id}/tools`)).body.tools as Array<{
      name: string;
      restricted?: boolean;
    }>;
    t.equal(tools.find((tool) => tool.name === 'fs_write')?.restricted, false, 'fs_write no longer asks');
    t.equal((await d.request('GET', `/agents/${id}/files/content?path=note.md`)).body.content, 'kept');
  });

  await t.test(
    "an MCP server's elicitation is an ask with its schema, a form; its answer is the JSON of the values",
    async (t) => {
      // A real MCP server (the SDK's, test/fixtures/mcp/sdk-server.mjs) whose `signup` tool elicits a form.
      const registered = await d.request('POST', '/mcp/servers', {
        name: 'asker',
        type: 'command',
        command: process.execPath,
        args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
      });
      t.equal(registered.status, 201, JSON.stringify(registered.body));
      const id = await load({ name: 'signer', mcp: { servers: [{ name: 'asker', transport: 'stdio' }] } });
      const end = Date.now() + 20_000;
      while ((await d.request('GET', `/agents/${id}/mcp`)).body.servers[0]?.status !== 'connected') {
        if (Date.now() > end) throw new Error('failsafe: the MCP server did not connect');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await page.evaluate((h) => (location.hash = h), `#/agent/${id}`);
      await page.getByRole('heading', { name: 'signer' }).waitFor();
      let answer = '';
      model.plays.push(() => reply.toolCalls([{ id: 'call_signup', name: 'mcp_asker_signup', args: {} }]));
      model.plays.push((request) => {
        answer = String(request.body.messages.at(-1).content);
        return reply.text('signed up');
      });
      const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'sign me up' })).body.turnId as string;
      const form = page.getByRole('form', { name: 'Answer to signer' });
      await form.getByLabel('Email').fill('owner@example.com');
      await form.getByLabel('Plan').selectOption('pro');
      await form.getByLabel('Seats').fill('3');
      await form.getByLabel('Newsletter').check();
      await form.getByRole('button', { name: 'Answer' }).click();
      await turnEnded(turnId);
      t.same(
        // The tool's result as the model got it (the server answers with what it was sent, as JSON).
        JSON.parse(answer.slice(answer.indexOf('{'), answer.lastIndexOf('}') + 1)),
        { action: 'accept', content: { email: 'owner@example.com', plan: 'pro', seats: 3, newsletter: true } },
        'the server got the values',
      );
      t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 200);
      t.equal((await d.request('DELETE', '/mcp/servers/asker')).status, 200);
    },
  );

  await t.test("a running MCP call's progress shows on its tool card", async (t) => {
    // A real MCP server (test/fixtures/mcp/notify-server.mjs) whose `steps` tool reports progress.
    const registered = await d.request('POST', '/mcp/servers', {
      name: 'stepper',
      type: 'command',
      command: process.execPath,
      args: [join(ROOT, 'test/fixtures/mcp/notify-server.mjs')],
    });
    t.equal(registered.status, 201, JSON.stringify(registered.body));
    const id = await load({ name: 'worker', mcp: { servers: [{ name: 'stepper', transport: 'stdio' }] } });
    const end = Date.now() + 20_000;
    while ((await d.request('GET', `/agents/${id}/mcp`)).body.servers[0]?.status !== 'connected') {
      if (Date.now() > end) throw new Error('failsafe: the MCP server did not connect');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await page.evaluate((h) => (location.hash = h), `#/agent/${id}`);
    await page.getByRole('heading', { name: 'worker' }).waitFor();
    model.plays.push(() =>
      reply.toolCalls([{ id: 'call_steps', name: 'mcp_stepper_steps', args: { count: 2, ms: 1500 } }]),
    );
    model.plays.push(() => reply.text('worked'));
    const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'work' })).body.turnId as string;
    const line = page.locator('.tool-card[data-tool="mcp_stepper_steps"] .tool-progress');
    await line.filter({ hasText: '2/2 step 2' }).waitFor();
    t.equal(await line.locator('progress').getAttribute('max'), '2', 'a bar when the end is known');
    await turnEnded(turnId);
    await line.waitFor({ state: 'detached' });
    t.pass('gone once the call ended');
    t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 200);
    t.equal((await d.request('DELETE', '/mcp/servers/stepper')).status, 200);
  });

  await t.test('an MCP call waiting for its server to confirm a URL elicitation says so on its card', async (t) => {
    // A real MCP server (test/fixtures/mcp/url-elicit-server.mjs) whose link completes on a GET of it.
    const registered = await d.request('POST', '/mcp/servers', {
      name: 'linker',
      type: 'command',
      command: process.execPath,
      args: [join(ROOT, 'test/fixtures/mcp/url-elicit-server.mjs')],
    });
    t.equal(registered.status, 201, JSON.stringify(registered.body));
    const id = await load({ name: 'linked', mcp: { servers: [{ name: 'linker', transport: 'stdio' }] } });
    const end = Date.now() + 20_000;
    while ((await d.request('GET', `/agents/${id}/mcp`)).body.servers[0]?.status !== 'connected') {
      if (Date.now() > end) throw new Error('failsafe: the MCP server did not connect');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await page.evaluate((h) => (location.hash = h), `#/agent/${id}`);
    await page.getByRole('heading', { name: 'linked' }).waitFor();
    model.plays.push(() => reply.toolCalls([{ id: 'call_link', name: 'mcp_linker_connect_calendar', args: {} }]));
    model.plays.push(() => reply.text('connected'));
    const turnId = (await d.request('POST', `/agents/${id}/chat`, { text: 'connect' })).body.turnId as string;
    const asked = await log.waitFor((e) => e.event_type === 'hil.requested' && e.agent_id === id, 'the link asked');
    const { requestId, question } = asked.payload as { requestId: string; question: string };
    t.equal((await d.request('POST', `/agents/${id}/asks/${requestId}/respond`, { answer: 'done' })).status, 200);
    const badge = page.locator('.tool-card[data-tool="mcp_linker_connect_calendar"] .badge');
    await badge.filter({ hasText: 'waiting for linker to confirm' }).waitFor();
    t.pass('the card waits for the server');
    t.equal((await fetch(question.match(/Link: (\S+)/)![1]!)).status, 200, 'the owner opens the link');
    await turnEnded(turnId);
    await badge.filter({ hasText: 'done' }).waitFor();
    t.pass('done once the server confirmed');
    t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 200);
    t.equal((await d.request('DELETE', '/mcp/servers/linker')).status, 200);
  });

  await t.test('approvals of two agents answered together in the inbox, keyboard only, at 390 px', async (t) => {
    const agentId = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    const otherId = await load({ name: 'fleet-two', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
    model.plays.push(() =>
      reply.toolCalls([{ id: 'call_1', name: 'fs_write', args: { path: 'note.txt', content: 'x' } }]),
    );
    const turnId = (await d.request('POST', `/agents/${agentId}/chat`, { text: 'write a note' })).body.turnId as string;
    await log.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turnId, 'the first approval');
    model.plays.push(() =>
      reply.toolCalls([{ id: 'call_2', name: 'fs_write', args: { path: 'other.txt', content: 'y' } }]),
    );
    const otherTurn = (await d.request('POST', `/agents/${otherId}/chat`, { text: 'write another' })).body
      .turnId as string;
    await log.waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === otherTurn, 'the second approval');
    model.plays.push(
      () => reply.text('written'),
      () => reply.text('written'),
    );
    await page.goto(`${d.url}/console/#/inbox`);
    await page.setViewportSize({ width: 390, height: 800 });
    const item = page.getByRole('listitem', { name: 'approval from fleet-one' });
    await item.waitFor();
    await page.getByRole('listitem', { name: 'approval from fleet-two' }).waitFor();
    t.ok(
      await item.locator('pre.args', { hasText: 'note.txt' }).isVisible(),
      'the arguments are shown without a click',
    );
    await page.locator('nav a', { hasText: 'Inbox' }).getByText('2').waitFor();
    t.pass('the navigation counts what waits');
    t.ok(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      'no horizontal scrolling at 390 px',
    );
    t.same(await axeSerious(page), [], 'axe: no serious violation on the inbox at 390 px');
    // Keyboard only: select the first (x), move down (j), select the second, approve both (a).
    await item.focus();
    for (const key of ['x', 'j', 'x']) await page.keyboard.press(key);
    await page.getByText('2 waiting, 2 selected').waitFor();
    await page.keyboard.press('a');
    await turnEnded(turnId);
    await turnEnded(otherTurn);
    await page.getByText('Nothing waits for an answer.').waitFor();
    t.same((await d.request('GET', '/tasks')).body.tasks, []);
    await page.setViewportSize({ width: 1100, height: 760 });
  });

  await t.test('the events tail shows frames and resumes after a dropped connection', async (t) => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    const agentId = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    // A frame while the page is connected.
    model.plays.push(() => reply.text('first frame'));
    await d.request('POST', `/agents/${agentId}/chat`, { text: 'one' });
    await page.locator('tr.event-row', { hasText: 'first frame' }).first().waitFor();
    // Hold the reconnect until a turn has run while the page was away.
    let letThrough!: () => void;
    const gate = new Promise<void>((done) => (letThrough = done));
    let lastEventId: string | undefined;
    await page.route('**/events**', async (route) => {
      lastEventId = route.request().headers()['last-event-id'];
      await gate;
      await route.continue();
    });
    const before = Number(await page.locator('#stream-connects').textContent());
    await page.getByRole('button', { name: 'Reconnect' }).click();
    model.plays.push(() => reply.text('while away'));
    await turnEnded((await d.request('POST', `/agents/${agentId}/chat`, { text: 'two' })).body.turnId);
    await t.resolves(
      new Promise<void>((done) => {
        const wait = () => (lastEventId !== undefined ? done() : setTimeout(wait, 10));
        wait();
      }),
    );
    letThrough();
    await page.locator('tr.event-row', { hasText: 'while away' }).first().waitFor();
    t.match(lastEventId, /^\d+$/, 'the reconnect carried Last-Event-ID');
    t.equal(Number(await page.locator('#stream-connects').textContent()), before + 1);
    await page.unroute('**/events**');
    // Pause freezes the list at its cursor; Resume shows what came meanwhile.
    await page.getByRole('button', { name: 'Pause' }).click();
    model.plays.push(() => reply.text('during the pause'));
    await turnEnded((await d.request('POST', `/agents/${agentId}/chat`, { text: 'three' })).body.turnId);
    await page.getByRole('button', { name: /^Resume from cursor \d+ \([1-9]\d* new\)$/ }).waitFor();
    t.equal(await page.locator('tr.event-row', { hasText: 'during the pause' }).count(), 0, 'not shown while paused');
    await page.getByRole('button', { name: /^Resume from cursor/ }).click();
    await page.locator('tr.event-row', { hasText: 'during the pause' }).first().waitFor();
    // Agents by name, and the agent filter matches a name.
    t.ok(
      await page
        .locator('tr.event-row', { hasText: 'during the pause' })
        .first()
        .getByRole('link', { name: 'fleet-one' })
        .isVisible(),
      'the agent shows by name',
    );
    await page.getByLabel('Agent', { exact: true }).fill('fleet-o');
    await page.locator('tr.event-row', { hasText: 'during the pause' }).first().waitFor();
    t.equal(
      await page.locator('tr.event-row').filter({ hasNotText: 'fleet-one' }).count(),
      0,
      'only fleet-one rows match its name',
    );
    // Opened afresh, the view shows what the daemon still holds (the backlog), not an empty table.
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.locator('tr.event-row', { hasText: 'first frame' }).first().waitFor();
    t.pass('the backlog is shown on opening');
  });

  await t.test('after a daemon restart the session holds and the events tail goes on', async (t) => {
    const before = Number(await page.locator('#stream-connects').textContent());
    d = await d.restart();
    t.ok(d.url, `started again: ${d.stderr()}`);
    log = await eventLog(t, d);
    // Node's fetch may first reuse a keep-alive socket the old daemon closed ("fetch failed"): such a
    // request never reached the new daemon, so it is sent again on a fresh socket.
    let agentId = '';
    for (let attempt = 0; !agentId; attempt++) {
      agentId = await load({ name: 'fleet-one' }).catch((error: Error) => {
        if (attempt >= 3 || error.message !== 'fetch failed') throw error;
        return '';
      });
    }
    await page.waitForFunction(
      (count) => Number(document.getElementById('stream-connects')?.textContent) > count,
      before,
      { timeout: 15_000 },
    );
    model.plays.push(() => reply.text('after the restart'));
    await turnEnded((await d.request('POST', `/agents/${agentId}/chat`, { text: 'four' })).body.turnId);
    await page.locator('tr.event-row', { hasText: 'after the restart' }).first().waitFor();
    t.pass('frames of the new daemon run arrive in the same page, same session');
  });

  await t.test("a disabled extension's panel says it is off", async (t) => {
    // A running extension's state is a readable list, not JSON: an MCP registration shows by name and kind.
    t.equal(
      (await d.request('POST', '/mcp/servers', { name: 'search', type: 'http', url: 'https://mcp.example.com/mcp' }))
        .status,
      201,
    );
    await page.getByRole('link', { name: 'System' }).click();
    await page.locator('[data-extension="mcp"] summary', { hasText: 'Details' }).click();
    const registration = page.locator('[data-extension="mcp"] ul.mcp-registrations > li', { hasText: 'search' });
    await registration.waitFor();
    t.match(await registration.textContent(), /search · http/);
    t.match(await page.locator('[data-extension="mcp"]').textContent(), /Running/);
    const compute = page.locator('[data-extension="compute"]');
    await compute.waitFor();
    t.match(await compute.textContent(), /off/);
    // Channels: an adapter that cannot connect shows its state and why; mesh: the server and its peers.
    const thrifty = await load({ name: 'thrifty' }); // loaded again: the restart above unloaded it
    const put = await d.request('PUT', `/agents/${thrifty}/adapters/telegram`, { enabled: true });
    t.equal(put.status, 200, JSON.stringify(put.body));
    const failed = async () =>
      ((await d.request('GET', `/agents/${thrifty}/adapters`)).body.adapters as Array<{ recentErrors: unknown[] }>)[0]!
        .recentErrors.length > 0;
    for (let n = 0; n < 100 && !(await failed()); n++) await new Promise((resolve) => setTimeout(resolve, 50));
    const channels = page.locator('[data-extension="channels"]');
    await channels.locator('summary', { hasText: 'Details' }).click();
    await channels.getByRole('button', { name: 'Refresh channels' }).click();
    await channels
      .locator('tr[data-adapter="thrifty/telegram"]', { hasText: /Error|Connecting/ })
      .filter({ hasText: 'is not set' })
      .waitFor()
      .catch(async (error) => {
        const report = (await d.request('GET', `/agents/${thrifty}/adapters`)).body;
        t.comment(`channels: ${await channels.innerText()}\n${JSON.stringify(report)}`);
        throw error;
      });
    const mesh = page.locator('[data-extension="mesh"]');
    await mesh.locator('summary', { hasText: 'Details' }).click();
    await mesh.getByText(/^Mesh server Running/).waitFor();
    await mesh.getByText('No other daemon found').waitFor();
    t.equal((await d.request('DELETE', `/agents/${thrifty}/adapters/telegram`)).status, 200);
    t.match(await page.locator('[data-extension="console"]').textContent(), /Running/);
    // A provider added from the form lands in the settings (the key stays a variable name).
    await page.getByLabel('Id', { exact: true }).fill('lab');
    await page.getByLabel('Name', { exact: true }).fill('Lab models');
    await page.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
    await page.getByLabel(/Key variable/).fill('LAB_KEY');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Added Lab models.' }).waitFor();
    // Checked with a real call: nothing answers on port 9, and the row says so.
    await page.getByRole('button', { name: 'Check Lab models' }).click();
    const labRow = page.locator('tr', { has: page.getByRole('button', { name: 'Check Lab models' }) });
    await labRow
      .locator('dl.readable dd', { hasText: /^false$/ })
      .first()
      .waitFor();
    t.match((await d.request('GET', '/settings')).body.providers, [
      { id: 'local' },
      { id: 'embed' },
      {
        id: 'lab',
        type: 'openai-compatible',
        name: 'Lab models',
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKeyEnv: 'LAB_KEY',
      },
    ]);
    // The month's spend by model, from the ledgers.
    await page.locator('table.spend-models td', { hasText: 'local/test-model' }).waitFor();
    // An extension's options from its schema: a change saved and in force.
    const providersCard = page.locator('[data-extension="providers"]');
    await providersCard.locator('summary', { hasText: 'Options' }).click();
    await providersCard.getByLabel('Max retries').fill('2');
    await providersCard.getByRole('button', { name: 'Save options' }).click();
    await providersCard
      .getByRole('status')
      .filter({ hasText: /^Saved/ })
      .waitFor();
    t.match((await d.request('GET', '/runtime/extensions/providers/config')).body.config, { maxRetries: 2 });
    t.equal((await d.request('PATCH', '/runtime/extensions/providers/config', { maxRetries: 0 })).status, 200);
    await checkView(t, page, 'system');
    // Dark from the system preference, and from the header's theme button.
    const lightBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'dark' });
    const darkBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    t.not(darkBg, lightBg, 'a dark background from the system preference');
    t.ok(
      darkBg
        .match(/\d+/g)!
        .slice(0, 3)
        .map(Number)
        .every((c) => c < 60),
      `dark: ${darkBg}`,
    );
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByRole('button', { name: /^Theme: system/ }).click();
    await page.getByRole('button', { name: /^Theme: light/ }).click();
    t.equal(
      await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
      darkBg,
      'the theme button forces dark',
    );
    await page.getByRole('button', { name: /^Theme: dark/ }).click();
    t.equal(
      await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
      lightBg,
      "and back to the system's",
    );
  });

  await t.test('an MCP registration with oauth: signed in from the System view in a new tab, then out', async (t) => {
    // A real OAuth-protected MCP server and its authorization server (the SDK's server half), which approves
    // at once: the new tab follows its redirect back to the daemon's loopback listener, as a browser does.
    const mcpUrl = (await startOAuthFixture(t)).mcp;
    const registered = await d.request('POST', '/mcp/servers', {
      name: 'tracker',
      type: 'http',
      url: mcpUrl,
      oauth: {},
    });
    t.equal(registered.status, 201, JSON.stringify(registered.body));
    await page.reload();
    await page.locator('[data-extension="mcp"] summary', { hasText: 'Details' }).click();
    const signIn = page.locator('[data-signin="tracker"]');
    await signIn.getByText('not signed in').waitFor();
    const opened = context.waitForEvent('page');
    await signIn.getByRole('button', { name: 'Sign in to tracker' }).click();
    const tab = await opened;
    await signIn.getByText('signed in', { exact: true }).waitFor();
    t.equal((await d.request('GET', '/mcp/servers/tracker/login')).body.signedIn, true, 'the daemon holds the sign-in');
    await tab.close();
    await signIn.getByRole('button', { name: 'Sign out of tracker' }).click();
    await signIn.getByText('not signed in').waitFor();
    t.equal((await d.request('GET', '/mcp/servers/tracker/login')).body.signedIn, false, 'signed out');
    t.equal((await d.request('DELETE', '/mcp/servers/tracker')).status, 200);
  });

  await t.test('the header: health, the identity locked and unlocked in place, what waits', async (t) => {
    await page.locator('.health', { hasText: 'Daemon healthy' }).waitFor();
    t.equal((await d.request('POST', '/identity/lock')).status, 200);
    await page.goto(`${d.url}/console/#/fleet`);
    await page.reload();
    const identity = page.locator('header .identity');
    await page.locator('header').getByText('Daemon healthy').waitFor();
    await identity.getByText('Locked').waitFor();
    await identity.getByRole('button', { name: 'Unlock' }).click();
    await page.getByLabel('Passphrase').fill('wrong passphrase here');
    await page.getByRole('button', { name: 'Unlock identity' }).click();
    await page.getByRole('alert').filter({ hasText: /./ }).first().waitFor();
    await page.getByLabel('Passphrase').fill('console test passphrase');
    await page.getByRole('button', { name: 'Unlock identity' }).click();
    await identity.getByText('Unlocked').waitFor();
    t.equal((await d.request('GET', '/identity')).body.status, 'ready', 'unlocked from the header');
    // The raw value is one click away.
    await identity.getByRole('button', { name: 'Unlocked' }).click();
    await identity.getByText('ready').waitFor();
    await identity.getByRole('button', { name: 'ready' }).click();
    await identity.getByText('Unlocked').waitFor();
  });

  await t.test(
    'a fleet of 1,000 agents: first screen within a second, a few rows in the DOM, search, sort, smooth scroll',
    async (t) => {
      const big = await context.newPage();
      const servedAt = await serveAgents(big, fleetOf(1000));
      await big.goto(`${d.url}/console/#/fleet`);
      await big.locator('tr[data-agent-id="agent-id-0"]').waitFor();
      const firstScreenMs = Date.now() - servedAt();
      t.ok(firstScreenMs < 1000, `first screen ${firstScreenMs} ms after the list was served`);
      const inDom = await big.locator('tr[data-agent-id]').count();
      t.ok(inDom > 5 && inDom < 100, `${inDom} rows in the DOM, not 1,000`);
      await big.getByText('1000 of 1000 agents').waitFor();
      // Scrolling: the frames stay short and the rows follow (generous bounds: the machine may be busy).
      const frames = (await scrollFrames(big)).sort((a, b) => a - b);
      const medianFrameMs = frames[Math.floor(frames.length / 2)]!;
      const worstFrameMs = frames.at(-1)!;
      t.ok(medianFrameMs < 50, `median frame while scrolling: ${Math.round(medianFrameMs)} ms`);
      t.ok(worstFrameMs < 500, `worst frame while scrolling: ${Math.round(worstFrameMs)} ms`);
      await big.locator('tr[data-agent-id="agent-id-999"]').waitFor();
      t.comment(
        `fleet of 1,000: first screen ${firstScreenMs} ms, ${inDom} rows in the DOM, median scroll frame ${Math.round(medianFrameMs)} ms, worst ${Math.round(worstFrameMs)} ms`,
      );
      await big.getByLabel('Search agents').fill('agent-0500');
      await big.getByText('1 of 1000 agents').waitFor();
      await big.getByLabel('Search agents').fill('');
      await big.locator('.vscroll').evaluate((box) => (box.scrollTop = 0));
      await big.getByRole('button', { name: /^Agent/ }).click();
      await big.locator('tbody tr[data-agent-id]').first().and(big.locator('[data-agent-id="agent-id-999"]')).waitFor();
      t.pass('sorted by name, descending');
      await big.getByLabel('State', { exact: true }).selectOption('stopped');
      await big.getByText('143 of 1000 agents').waitFor();
      await big.close();
    },
  );

  await t.test(
    "evals: runs listed live, a run's variants and cases, two runs' answers side by side, cancel",
    async (t) => {
      // Eval runs started through the API as `agt eval run` starts them; the model answers the deploy case by
      // the run (`style`), and the variant on model `cheap` gets the day wrong.
      const answers = (style: string) => (request: RecordedRequest) => {
        const messages = request.body.messages as Array<{ role: string; content: unknown }>;
        const question = String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
        if (!/deploy/i.test(question)) return reply.text('Hello! How can I help?');
        return reply.text(request.body.model === 'cheap' ? 'We deploy on Fridays.' : style);
      };
      const suite = {
        name: 'release-desk',
        cases: [
          { name: 'deploy day', input: 'When do we deploy?', assert: [{ contains: 'Tuesday' }] },
          { name: 'greeting', input: 'hello', assert: [{ maxToolCalls: 0 }] },
        ],
      };
      const start = async (style: string, calls: number, variants?: unknown[]) => {
        for (let n = 0; n < calls; n++) model.plays.push(answers(style));
        const started = await d.request('POST', '/evals/runs', { suite, agent: 'fleet-one', variants, concurrency: 1 });
        t.equal(started.status, 202, JSON.stringify(started.body));
        return started.body.id as string;
      };
      const go = async (hash: string) => page.evaluate((h) => (location.hash = h), hash);
      await go('#/evals');
      await page.getByText('No eval run yet.').waitFor();
      const first = await start('We deploy on Tuesdays.', 2);
      const row = (id: string) => page.locator(`tr[data-run-id="${id}"]`);
      await row(first).filter({ hasText: 'Passed' }).filter({ hasText: '100%' }).waitFor();
      t.pass('a run started elsewhere appears and ends in the list, from its events');
      const second = await start('Deploys are on Tuesdays, after the standup.', 4, [
        { label: 'baseline' },
        { label: 'cheap', model: 'local/cheap' },
      ]);
      await row(second).filter({ hasText: 'Failed' }).filter({ hasText: 'cheap: 50%' }).waitFor();
      // Two runs picked: their answers side by side, case by case.
      await row(first).getByRole('checkbox').check();
      await row(second).getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Compare answers' }).click();
      const deploy = page.locator('table.eval-diff tr.differs[data-case="deploy day"]');
      await deploy.filter({ hasText: 'We deploy on Tuesdays.' }).filter({ hasText: 'after the standup' }).waitFor();
      await page.locator('table.eval-diff tr.same[data-case="greeting"]', { hasText: 'same answer' }).waitFor();
      await checkView(t, page, 'eval-diff');
      // The second run: its variants side by side, the failed assertion with its detail and the answer.
      await page.locator(`table.eval-diff thead a[href="#/evals/${second}"]`).click();
      await page
        .getByRole('table', { name: 'Variants side by side' })
        .locator('tr', { hasText: 'cheap' })
        .filter({ hasText: '50%' })
        .waitFor();
      const failed = page.locator('table.eval-cases tr[data-case="deploy day"]', { hasText: 'We deploy on Fridays.' });
      await failed.filter({ hasText: 'Failed' }).locator('.failed-assertions', { hasText: 'contains' }).waitFor();
      await everyLook(t, page, 'eval-run', () => failed.waitFor());
      await go('#/evals');
      await everyLook(t, page, 'evals', () => row(second).waitFor());
      // A run whose model never answers: its page shows it running, Cancel ends it.
      let asked!: () => void;
      const waiting = new Promise<void>((resolve) => (asked = resolve));
      model.plays.push(() => (asked(), reply.stall()));
      const stuck = await start('', 0);
      await go(`#/evals/${stuck}`);
      await page.getByText('0 of 2 case runs done').waitFor();
      await waiting;
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await page.locator('.agent-head', { hasText: 'Cancelled' }).waitFor();
      t.equal((await d.request('GET', `/evals/runs/${stuck}`)).body.status, 'cancelled');
    },
  );

  await t.test('every view in light and dark, at 1280 and 390 px', async (t) => {
    const agentId = ((await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>).find(
      (a) => a.name === 'fleet-one',
    )!.id;
    // A turn with a tool call that waits for approval: the chat shows a tool card, the inbox an item.
    model.plays.push(() =>
      reply.toolCalls([{ id: 'call_look', name: 'fs_write', args: { path: 'report.md', content: '# Weekly report' } }]),
    );
    model.plays.push(() => reply.text('Saved **report.md**:\n\n```\n# Weekly report\n```'));
    log = await eventLog(t, d);
    const chat = await d.request('POST', `/agents/${agentId}/chat`, { text: 'save the weekly report' });
    t.equal(chat.status, 202, JSON.stringify(chat.body));
    const turnId = chat.body.turnId as string;
    await log
      .waitFor((e) => e.event_type === 'hil.requested' && e.turn_id === turnId, 'the approval')
      .catch((error) => {
        t.comment(
          JSON.stringify(log.events.map((e) => [e.event_type, e.agent_id, e.turn_id, e.payload])).slice(0, 3000),
        );
        throw error;
      });
    const go = async (hash: string) => page.evaluate((h) => (location.hash = h), hash);
    await go('#/fleet');
    await everyLook(t, page, 'fleet', () => page.locator('a.agent-name').first().waitFor());
    await go(`#/agent/${agentId}`);
    await everyLook(t, page, 'agent', () => page.locator('.tool-card', { hasText: 'fs_write' }).first().waitFor());
    await go('#/inbox');
    await everyLook(t, page, 'inbox', () => page.getByRole('listitem', { name: 'approval from fleet-one' }).waitFor());
    await go('#/events');
    await everyLook(t, page, 'events', () => page.locator('tr.event-row').first().waitFor());
    await go('#/system');
    await everyLook(t, page, 'system', () => page.locator('[data-extension="mcp"]').waitFor());
    await go(`#/agent/${agentId}`);
    for (const memory of [
      { text: 'Reports go to the #ops channel as Markdown', kind: 'instruction' },
      { text: 'The weekly report covers deploys, incidents and spend', kind: 'fact' },
    ]) {
      t.equal((await d.request('POST', `/agents/${agentId}/memory`, memory)).status, 201);
    }
    await page.getByRole('button', { name: 'Memory' }).click();
    await everyLook(t, page, 'agent-memory', () =>
      page.locator('tr[data-memory-id]', { hasText: 'covers deploys' }).waitFor(),
    );
    await page.getByRole('button', { name: 'Logs' }).click();
    await everyLook(t, page, 'agent-logs', () => page.getByRole('group', { name: 'Levels' }).waitFor());
    const task = ((await d.request('GET', '/tasks')).body.tasks as Array<{ id: string }>)[0]!;
    t.equal(
      (await d.request('POST', `/agents/${agentId}/tasks/${task.id}/resolve`, { action: 'approve' })).status,
      200,
    );
    await turnEnded(turnId);
    // The turn's timeline: its model calls, the tool call and the wait for the owner, from the events.
    await go(`#/agent/${agentId}`);
    await page.getByRole('button', { name: 'Timeline' }).click();
    const steps = page.getByRole('list', { name: 'Steps of the turn' });
    await steps.locator('.span-tool', { hasText: 'fs_write' }).waitFor();
    await steps.locator('.span-owner', { hasText: 'approval' }).waitFor();
    t.equal(await steps.locator('.span-model').count(), 2, 'two model calls: before and after the approval');
    // The pinned memory of the Memory tab was recalled before the turn (memory.recalled names it).
    const pinned = (
      (await d.request('GET', `/agents/${agentId}/memory?pinned=true`)).body.memories as Array<{ id: number }>
    )[0]!;
    await steps.locator('.span-memory', { hasText: `recalled 1 memory #${pinned.id}` }).waitFor();
    // And in the chat, after the message that started the turn; its text opens from the keyboard.
    const recall = page.locator('ol.live li.msg-user:has-text("save the weekly report") + li.recall');
    await recall.locator('summary', { hasText: `Recalled 1 memory (#${pinned.id}; ` }).focus();
    await page.keyboard.press('Enter');
    await recall.getByText('Deploys happen on Tuesdays after the standup').waitFor();
    await everyLook(t, page, 'agent-timeline', () => steps.locator('.span-tool').waitFor());
    t.same(cspViolations, [], 'no CSP violation in any view');
    t.same(pageErrors, [], 'no uncaught error in the page, daemon restart included');
    await context.close();
  });
});
