/**
 * The console in headless Chromium (test/helpers/console-browser.ts: one built daemon, a scripted model): axe-core (no
 * serious or critical violation) on every view in light and dark at 1280 and 390 px, with a turn's tool card, approval,
 * recalled memory and timeline; the System view's panels (a disabled extension, MCP registrations, channels and mesh,
 * a provider added and checked, the month's spend, extension options, the theme); an MCP OAuth sign-in and sign-out
 * from the System view (a real OAuth fixture server); the identity unlocked from the header; a fleet of 1,000 agents
 * (first screen, rows in the DOM, search, sort, scroll). No CSP violation, no uncaught page error.
 * AGT_UPDATE_SCREENSHOTS=1 saves the views into docs/console/. Skips, saying why, when Chromium cannot run.
 */
import t from 'tap';
import type { Browser } from 'playwright-core';
import { reply } from './fakes/openai.js';
import { eventLog } from './helpers/events.js';
import { startOAuthFixture } from './helpers/oauth-fixture.js';
import {
  checkView,
  consoleDaemon,
  everyLook,
  fleetOf,
  launch,
  scrollFrames,
  serveAgents,
  watchedLogin,
} from './helpers/console-browser.js';

const browserOrSkip = await launch();
const skip = typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(skip);

t.test('the console in headless Chromium: every view, the System view, the header', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const fixture = await consoleDaemon(t);
  const { d, model, load, turnEnded } = fixture;
  let { log } = fixture;
  t.ok(d.url, `the daemon started: ${d.stderr()}`);
  // The owner's identity (unlocked from the header below), and an agent whose pinned memory a turn recalls.
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'console test passphrase' })).status, 201);
  const fleetOne = await load({ name: 'fleet-one', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const memo = { text: 'Deploys happen on Tuesdays after the standup', pinned: true };
  t.equal((await d.request('POST', `/agents/${fleetOne}/memory`, memo)).status, 201);
  const { context, page, cspViolations, pageErrors } = await watchedLogin(browser, d);

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
    const thrifty = await load({ name: 'thrifty' });
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

  await t.test('no CSP violation and no uncaught error in the page', async (t) => {
    t.same(cspViolations, [], 'no CSP violation in any view');
    t.same(pageErrors, [], 'no uncaught error in the page');
    await context.close();
  });
});
