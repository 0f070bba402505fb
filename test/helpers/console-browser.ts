/**
 * Shared by the console's browser tests (test/console-*.test.ts): headless Chromium (Debian's `chromium`, driven by
 * playwright-core; `launch()` resolves to a reason string when it cannot run, for the file to skip saying why),
 * axe-core's serious violations of a page, and `everyLook`: a view in light and dark at 1280 and 390 px, axe-clean,
 * nothing wider than a phone, and (AGT_UPDATE_SCREENSHOTS=1) its screenshots into docs/console/. `loggedIn` opens a
 * page logged in with the daemon token. `fleetOf` and
 * `serveAgents` serve the fleet view a list of made-up agents (the 1,000-agent test and bench/console-fleet.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type tap from 'tap';
import { ROOT } from './daemon.js';

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
