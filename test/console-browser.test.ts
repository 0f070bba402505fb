/**
 * The console in a real headless Chromium (Debian's `chromium`, driven by playwright-core) against one built daemon
 * (the shipped extensions, compute off) and a scripted model (a fake OpenAI-format server), used as a person uses it:
 * login by one-time URL and by token, the fleet following the event stream, a chat sent from the keyboard with its
 * reply streamed, the agent's details (history, files, loops, credentials, timers, its memory added, pinned, searched
 * on words only and then by meaning, forgotten; a backup, the config's form from its schema and its diff, usage), an
 * ask answered inline, a budget raised and a tool always allowed inline, the CSP header and no uncaught page error.
 * The other views are in test/console-browser-turns.test.ts and test/console-browser-views.test.ts (the setup they
 * share is in test/helpers/console-browser.ts): three files a runner can run side by side. Skips, saying why, when
 * Chromium is not installed or cannot start.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ServerResponse } from 'node:http';
import { reply, type FakeReply, type RecordedRequest } from './fakes/openai.js';
import { startSse } from './fakes/server.js';
import { importFile, ROOT, tempDir } from './helpers/daemon.js';
import { checkView, consoleDaemon, everyLook, launch, watched } from './helpers/console-browser.js';

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

t.test('the console in headless Chromium: login, the fleet, the agent view', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const fixture = await consoleDaemon(t);
  t.ok(fixture.gzipped <= 150 * 1024, `UI is ${fixture.gzipped} bytes gzipped (budget 150 KB)`);
  const { d, model, log, load, turnEnded } = fixture;
  t.ok(d.url, `the daemon started: ${d.stderr()}`);

  let context: BrowserContext;
  /** Console messages of the page about its CSP: the console must run under its own policy. */
  let cspViolations: string[] = [];
  /** Uncaught errors of the page: none are expected. */
  let pageErrors: string[] = [];
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
    ({ cspViolations, pageErrors } = watched(page));
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

  await t.test('no CSP violation and no uncaught error in the page', async (t) => {
    t.same(cspViolations, [], 'no CSP violation in any view');
    t.same(pageErrors, [], 'no uncaught error in the page');
    await context.close();
  });
});
