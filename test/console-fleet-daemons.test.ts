/**
 * The System view's fleet panel in headless Chromium (helpers/console-browser.ts): two built daemons in one fleet
 * on a real nats-server (helpers/nats.ts), each listed alive with its agents (names linking to the agent's view);
 * a drain through `POST /fleet/drain` shown as Drained with its agents gone to the other, an undrain and a drain
 * from the panel's buttons; axe-clean in light and dark at 1280 and 390 px. A third daemon, with the extension on
 * but no settings `fleet`, says the fleet is off. Skips, saying why, without nats-server or Chromium.
 */
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { createAgentFile } from './helpers/agent-file.js';
import { axeSerious, everyLook, launch, loggedIn } from './helpers/console-browser.js';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';

const nats = await startNats(t);
const browserOrSkip = typeof nats === 'string' ? nats : await launch();
const skip = typeof nats === 'string' ? nats : typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(`skipped: ${skip}`);

/** The fleet manifest without the mesh's LAN discovery and the container engine, which this test does not use. */
function manifest() {
  const { extensions } = fleetManifest({ requestTimeoutMs: 10_000 });
  return {
    extensions: (extensions as Array<Record<string, unknown>>).map((entry) =>
      entry.name === 'compute'
        ? { ...entry, enabled: false }
        : entry.name === 'mesh'
          ? { ...entry, config: { mdns: { enabled: false } } }
          : entry,
    ),
  };
}

async function openSystem(browser: Browser, d: SpawnedDaemon, errors: string[]): Promise<Page> {
  const page = await loggedIn(browser, d, errors);
  await page.evaluate(() => (location.hash = '#/system'));
  return page;
}

t.test('System: the fleet daemons with their agents, drained and undrained', { skip }, async (t) => {
  if (typeof nats === 'string' || typeof browserOrSkip === 'string') return;
  const browser = browserOrSkip;
  t.teardown(() => browser.close());
  const daemon = (daemonName?: string) =>
    runDaemon(t, {
      settings: daemonName ? { fleet: { servers: [nats.url], name: 'panel', daemonName } } : {},
      extensions: manifest(),
    });
  const [alpha, beta, lone] = await Promise.all([daemon('alpha'), daemon('beta'), daemon()]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta)]);
  const folder = tempDir(t, 'agt-fleet-panel-');
  const load = async (d: SpawnedDaemon, name: string) => {
    const loaded = await d.request('POST', '/agents/load', { filePath: await createAgentFile(folder, { name }) });
    t.equal(loaded.status, 200, `${name} loaded`);
    return loaded.body.id as string;
  };
  const [, , cyId] = await Promise.all([load(alpha, 'ada'), load(alpha, 'bob'), load(beta, 'cy')]);

  // Each daemon's first heartbeat follows its connection, and the placements come through a watch: wait for both.
  const names = (body: { daemons: Array<{ agents: Array<{ name: string }> }> }) =>
    body.daemons.map((d) => d.agents.map((a) => a.name));
  const until = Date.now() + 15_000;
  let listed = await alpha.request('GET', '/fleet/daemons');
  while (
    listed.status !== 200 ||
    !listed.body.daemons.every((d: { alive: boolean }) => d.alive) ||
    JSON.stringify(names(listed.body)) !== JSON.stringify([['ada', 'bob'], ['cy']])
  ) {
    if (Date.now() > until) throw new Error(`GET /fleet/daemons: ${JSON.stringify(listed.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    listed = await alpha.request('GET', '/fleet/daemons');
  }
  t.match(listed.body, {
    fleet: 'panel',
    daemons: [
      { name: 'alpha', self: true, alive: true, draining: false, replication: { enabled: false } },
      { name: 'beta', self: false, alive: true, draining: false, replication: { enabled: false }, heartbeatAt: Number },
    ],
  });
  t.same(names(listed.body), [['ada', 'bob'], ['cy']], 'each daemon with the agents it runs');
  t.match(await lone.request('GET', '/fleet/daemons'), { status: 503, body: { code: 'unavailable' } });

  const errors: string[] = [];
  const page = await openSystem(browser, alpha, errors);
  const panel = page.locator('section[data-panel="fleet-daemons"]');
  const row = (name: string) => panel.locator(`tr[data-daemon="${name}"]`);
  await panel.getByRole('button', { name: '2 of 2 alive' }).waitFor();
  t.match(await row('alpha').innerText(), /alpha \(this one\)\s+Alive[\s\S]*Takes agents\s+Not replicated\s+2 agents/);
  t.match(await row('beta').innerText(), /beta\s+Alive[\s\S]*Takes agents\s+Not replicated\s+1 agent\b/);
  t.same(await row('alpha').getByRole('link').allInnerTexts(), ['ada', 'bob']);
  await row('beta').getByRole('button', { name: 'Takes agents' }).click();
  await row('beta').getByText('draining: false').waitFor();
  t.pass('the raw value one click away');

  await row('beta').getByRole('link', { name: 'cy' }).click();
  await page.waitForURL((url) => url.hash === `#/agent/${cyId}`);
  await page.getByRole('heading', { name: 'cy' }).first().waitFor();
  t.pass('an agent of the other daemon opens in the agent view');
  await page.evaluate(() => (location.hash = '#/system'));

  const drained = await alpha.request('POST', '/fleet/drain', { daemon: 'beta', to: ['alpha'] });
  t.match(drained, { status: 200, body: { daemon: 'beta', moved: [{ agentId: cyId, to: 'alpha' }], failed: [] } });
  await row('beta').getByRole('button', { name: 'Drained' }).waitFor();
  await row('alpha').getByText('3 agents').waitFor();
  t.match(await row('beta').innerText(), /Drained\s+to alpha[\s\S]*no agents/, 'drained, its agent gone to alpha');
  await everyLook(t, page, 'system-fleet', () => row('beta').getByRole('button', { name: 'Drained' }).waitFor());

  await row('beta').getByRole('button', { name: 'Let beta take new agents again' }).click();
  await panel.getByRole('status').getByText('beta takes new agents again.').waitFor();
  await row('beta').getByRole('button', { name: 'Takes agents' }).waitFor();
  t.match((await beta.request('GET', '/fleet')).body, { draining: false });

  await row('alpha').getByRole('button', { name: 'Drain alpha' }).click();
  await row('alpha').getByText('Move 3 agents to beta; alpha then takes no new agents until undrained.').waitFor();
  await row('alpha').getByRole('button', { name: 'Drain alpha', exact: true }).click();
  // A drain moves each agent through its final copy (a handoff and a takeover): seconds on a loaded machine.
  await panel.getByRole('status').getByText('Drained alpha: 3 agents moved.').waitFor({ timeout: 60_000 });
  await row('beta').getByText('3 agents').waitFor();
  t.match((await alpha.request('GET', '/fleet')).body, { draining: true, drainTo: ['beta'], agents: [] });
  t.same(await axeSerious(page), [], 'axe: the panel with a drained daemon and its confirmation gone');

  const loneErrors: string[] = [];
  const off = await openSystem(browser, lone, loneErrors);
  const offPanel = off.locator('section[data-panel="fleet-daemons"]');
  await offPanel.getByText('The fleet is off: this daemon runs alone.').waitFor();
  await offPanel.getByRole('button', { name: 'Off' }).click();
  await offPanel.getByText('configured: false').waitFor();
  t.same(await axeSerious(off), [], 'axe: the panel of a daemon outside a fleet');
  t.same([...errors, ...loneErrors], [], 'no uncaught page error');
});
