/**
 * The console in headless Chromium (test/helpers/console-browser.ts: one built daemon, a scripted model) where turns
 * wait on someone: a real MCP server's elicitation as a form from its schema, a running MCP call's progress on its
 * tool card, a call waiting for its server to confirm a URL elicitation, two approvals answered together in the
 * inbox from the keyboard at 390 px; the events tail (frames, a dropped connection resumed with Last-Event-ID,
 * pause and resume, names, the backlog) and, after a daemon restart,
 * the same session and tail going on; eval runs (listed live, a run's variants and cases, two runs' answers side by
 * side, cancel). No CSP violation, no uncaught page error. Skips, saying why, when Chromium cannot run.
 */
import t from 'tap';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { reply, type RecordedRequest } from './fakes/openai.js';
import { ROOT } from './helpers/daemon.js';
import { axeSerious, checkView, consoleDaemon, everyLook, launch, watchedLogin } from './helpers/console-browser.js';

const browserOrSkip = await launch();
const skip = typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(skip);

t.test('the console in headless Chromium: turns that wait, the events tail, evals', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const fixture = await consoleDaemon(t);
  const { model, load, turnEnded } = fixture;
  let { d, log } = fixture;
  t.ok(d.url, `the daemon started: ${d.stderr()}`);
  await load({ name: 'fleet-one', tools: [{ name: 'fs_write', enabled: true, restricted: true }] });
  const { context, page, cspViolations, pageErrors } = await watchedLogin(browser, d);

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
    await fixture.restart();
    d = fixture.d;
    t.ok(d.url, `started again: ${d.stderr()}`);
    log = fixture.log;
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

  await t.test('no CSP violation and no uncaught error in the page, daemon restart included', async (t) => {
    t.same(cspViolations, [], 'no CSP violation in any view');
    t.same(pageErrors, [], 'no uncaught error in the page, daemon restart included');
    await context.close();
  });
});
