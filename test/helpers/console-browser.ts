/**
 * Shared by the console's browser tests (test/console-*.test.ts): headless Chromium (Debian's `chromium`, driven by
 * playwright-core; `launch()` resolves to a reason string when it cannot run, for the file to skip saying why),
 * axe-core's serious violations of a page, and `everyLook`: a view in light and dark at 1280 and 390 px, axe-clean,
 * nothing wider than a phone, and (AGT_UPDATE_SCREENSHOTS=1) its screenshots into docs/console/. `loggedIn` opens a
 * page logged in with the daemon token. `fleetOf` and
 * `serveAgents` serve the fleet view a list of made-up agents (the 1,000-agent test and bench/console-fleet.ts).
 * `consoleDaemon` is the setup of the console-browser files (test/console-browser*.test.ts): the console built, a
 * daemon with a scripted model and an embedder, and `watched` a page's CSP violations and uncaught errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type tap from 'tap';
import { startFakeEmbedder } from '../fakes/embedder.js';
import { reply, startFakeOpenAI, type FakeReply, type RecordedRequest } from '../fakes/openai.js';
import { createAgentFile } from './agent-file.js';
import { ROOT, runDaemon, shippedManifest, tempDir, type SpawnedDaemon } from './daemon.js';
import { eventLog, type EventLog } from './events.js';
import { endsTurn } from './wire-daemon.js';

const executable = ['chromium', 'chromium-browser']
  .map((name) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim())
  .find(Boolean);
/** What checkView asserts with (any subtest). */
type Asserts = Pick<typeof tap, 'same'>;
type LookAsserts = Pick<typeof tap, 'same' | 'ok'>;
const SHOTS = process.env.AGT_UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'console') : undefined;
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * `count` made-up agents named agent-0000 onwards (every 7th stopped): the list the fleet view is served to
 * see it at scale (docs/console.md, "Fleet").
 */
export function fleetOf(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: `agent-id-${i}`,
    name: `agent-${String(i).padStart(4, '0')}`,
    handle: null,
    filePath: null,
    autostart: false,
    runtimeState: i % 7 === 0 ? 'stopped' : 'idle',
    displayState: 'idle',
  }));
}

/** Frame times (ms) while the fleet's scroll box moves 600 px a frame from top to bottom. */
export function scrollFrames(page: Page): Promise<number[]> {
  return page.evaluate(async () => {
    const box = document.querySelector('.vscroll') as HTMLElement;
    const frames: number[] = [];
    let last = performance.now();
    for (let top = 0; top <= box.scrollHeight; top += 600) {
      box.scrollTop = top;
      await new Promise((done) => requestAnimationFrame(done));
      const now = performance.now();
      frames.push(now - last);
      last = now;
    }
    return frames;
  });
}

/**
 * Answers the page's `GET /agents` with `agents` (its other requests still reach the daemon); the returned
 * function reads when the list was first served (`Date.now()`, 0 before).
 */
export async function serveAgents(page: Page, agents: unknown[]): Promise<() => number> {
  let servedAt = 0;
  const body = JSON.stringify(agents);
  await page.route('**/agents', async (route) => {
    await route.fulfill({ status: 200, contentType: 'application/json', body });
    servedAt ||= Date.now();
  });
  return () => servedAt;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A page of a new 1100 × 760 context logged in to `d`'s console with the daemon token, on the Fleet view;
 * uncaught page errors are pushed to `errors`.
 */
export async function loggedIn(browser: Browser, d: { url: string; token: string }, errors: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${d.url}/console/`);
  await page.getByLabel('Daemon token').fill(d.token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
  return page;
}

export async function launch(): Promise<Browser | string> {
  if (!executable) return 'Chromium is not installed (apt-get install chromium): the console browser test did not run';
  try {
    return await chromium.launch({
      executablePath: executable,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  } catch (error) {
    return `Chromium could not start (${(error as Error).message.split('\n')[0]}): the console browser test did not run`;
  }
}

/** The axe rules whose answer depends on colours: all that a colour scheme changes (app.css: tokens only). */
const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

/**
 * axe-core's serious and critical violations on the page (axe injected once per document: a hash change
 * keeps it). `colours`: only the rules that read colours, for a second colour scheme of a view whose every
 * rule already ran in the first (the same DOM and layout).
 */
export async function axeSerious(page: Page, colours = false): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const runOnly = colours ? { type: 'rule', values: COLOUR_RULES } : ['wcag2a', 'wcag2aa', 'best-practice'];
  return page.evaluate(async (runOnly) => {
    const result = await (window as any).axe.run(document, { runOnly });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  }, runOnly);
}

export async function checkView(t: Asserts, page: Page, name: string): Promise<void> {
  t.same(await axeSerious(page), [], `axe: no serious violation on the ${name} view`);
}

export const SIZES = [
  [1280, 800],
  [390, 844],
] as const;
/**
 * The page in light and dark at 1280 and 390 px: axe clean in each (every rule in light; in dark the
 * colour rules, as the dark theme changes colour tokens only), nothing wider than a phone's screen, and
 * (AGT_UPDATE_SCREENSHOTS=1) a screenshot of each as docs/console/<name>-<scheme>-<width>.png. `ready`
 * shows the view's content, waited for after each change.
 */
export async function everyLook(
  t: LookAsserts,
  page: Page,
  name: string,
  ready: () => Promise<unknown>,
): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const [width, height] of SIZES) {
      await page.setViewportSize({ width, height });
      await ready();
      const colours = colorScheme === 'dark';
      t.same(
        await axeSerious(page, colours),
        [],
        `axe: no serious violation${colours ? ' of colour' : ''} on ${name}, ${colorScheme}, ${width} px`,
      );
      if (width < 400)
        t.ok(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          `${name}: nothing wider than ${width} px (${colorScheme})`,
        );
      if (SHOTS) {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, `${name}-${colorScheme}-${width}.png`), fullPage: true });
      }
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1100, height: 760 });
}

/** A model whose each call the test scripts as a function of the request (a fake OpenAI-format server). */
export class PlayedModel {
  readonly plays: Array<(request: RecordedRequest) => FakeReply | Promise<FakeReply>> = [];
  readonly script = (request: RecordedRequest) => (this.plays.shift() ?? (() => reply.text('ok')))(request);
}

export interface ConsoleDaemon {
  /** The daemon; `restart()` replaces it (same port and data folder: the same origin and sessions file). */
  d: SpawnedDaemon;
  model: PlayedModel;
  /** The daemon's events from its start (a new log after a restart). */
  log: EventLog;
  /** The console's gzipped size, as built for this daemon. */
  gzipped: number;
  /** Loads the agent of `config` (the same file for the same name) and resolves with its id. */
  load(config: Record<string, unknown>): Promise<string>;
  /** The id of the loaded agent named `name`. */
  agentId(name: string): Promise<string>;
  turnEnded(turnId: string): Promise<unknown>;
  restart(): Promise<void>;
}

/**
 * The console built into a temp folder and served by one built daemon (the shipped extensions, compute off) on a
 * fixed port, with a scripted model (provider `local`) and a fake embedder (provider `embed`).
 */
export async function consoleDaemon(t: Pick<typeof tap, 'teardown'>): Promise<ConsoleDaemon> {
  const uiDir = tempDir(t, 'agt-console-ui-');
  const { buildConsole } = (await import(pathToFileURL(join(ROOT, 'scripts/build-console.mjs')).href)) as {
    buildConsole(dir: string): Promise<number>;
  };
  const gzipped = await buildConsole(uiDir);
  // A fixed port and data folder, so a restarted daemon is the same origin with the same sessions file.
  const dataDir = tempDir(t, 'agt-console-data-');
  const agentsDir = tempDir(t, 'agt-console-agents-');
  const port = await freePort();
  const model = new PlayedModel();
  const fake = await startFakeOpenAI(t, model.script);
  // Memory search by meaning, once settings memory.embeddings turn it on.
  const embedder = await startFakeEmbedder(t);
  const { extensions } = shippedManifest({ console: { uiDir }, providers: { maxRetries: 0 } });
  const d = await runDaemon(t, {
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
  if (!d.url) throw new Error(`the daemon did not start: ${d.stderr()}`);
  const files = new Map<string, string>();
  const fixture: ConsoleDaemon = {
    d,
    model,
    // Every event from the start, so a wait for a turn that ended before its id was known still resolves.
    log: await eventLog(t, d),
    gzipped,
    async load(config) {
      const filePath = files.get(String(config.name)) ?? (await createAgentFile(agentsDir, config));
      files.set(String(config.name), filePath);
      const res = await fixture.d.request('POST', '/agents/load', { filePath });
      if (res.status !== 200) throw new Error(`load failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    async agentId(name) {
      const agents = (await fixture.d.request('GET', '/agents')).body as Array<{ id: string; name: string }>;
      const found = agents.find((agent) => agent.name === name);
      if (!found) throw new Error(`no agent named ${name}`);
      return found.id;
    },
    turnEnded: (turnId) => fixture.log.waitFor((e) => endsTurn(e, turnId), `the end of turn ${turnId}`),
    async restart() {
      fixture.d = await fixture.d.restart();
      if (!fixture.d.url) throw new Error(`the daemon did not start again: ${fixture.d.stderr()}`);
      fixture.log = await eventLog(t, fixture.d);
    },
  };
  return fixture;
}

/** A page's Content-Security-Policy messages and uncaught errors, from now on: none are expected. */
export function watched(page: Page): { cspViolations: string[]; pageErrors: string[] } {
  const found = { cspViolations: [] as string[], pageErrors: [] as string[] };
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) found.cspViolations.push(message.text());
  });
  page.on('pageerror', (error) => found.pageErrors.push(error.message));
  return found;
}

/** A new 1100 × 760 context's page logged in to `d`'s console with the daemon token, watched from the start. */
export async function watchedLogin(
  browser: Browser,
  d: { url: string; token: string },
): Promise<{ context: BrowserContext; page: Page; cspViolations: string[]; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  // Waits on the DOM end well within this when the console works; a failure says where it stopped.
  page.setDefaultTimeout(10_000);
  const found = watched(page);
  await page.goto(`${d.url}/console/`);
  await page.getByLabel('Daemon token').fill(d.token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
  return { context, page, ...found };
}
