/**
 * The console's fleet view with 1,000 agents, in headless Chromium (Debian's `chromium`, driven by playwright-core;
 * skipped, saying why, without it), served as test/console-browser-views.test.ts serves it: the UI built by
 * scripts/build-console.mjs, the built daemon with the shipped extensions (compute off), a console session from a
 * one-time code, and the page's `GET /agents` answered with 1,000 made-up agents. Per run, a fresh page:
 *
 * - first screen: the list served → the first row in the DOM (ms, as the test measures it);
 * - the rows in the DOM (the view renders only those in sight);
 * - frame times while scrolling the whole list, 600 px a frame (the time between animation frames);
 * - search and sort: the input event or click → the first animation frame that shows the result.
 *
 * Medians over `runs` runs (frames: median and p95 over every run's frames).
 *
 * Usage: node --import tsx bench/console-fleet.ts [--runs=5]  (after npm run build)
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { fleetOf, launch, scrollFrames, serveAgents } from '../test/helpers/console-browser.js';
import { ROOT, runDaemon, shippedManifest, tempDir } from '../test/helpers/daemon.js';
import { percentile, runThenClean } from './http.js';

const AGENTS = 1000;

export interface ConsoleFleetFigures {
  agents: number;
  runs: number;
  firstScreenMs: number;
  rowsInDom: number;
  frameMedianMs: number;
  frameP95Ms: number;
  frameMaxMs: number;
  searchMs: number;
  sortMs: number;
  samples: { firstScreenMs: number[]; rowsInDom: number[]; searchMs: number[]; sortMs: number[]; frames: number };
}

/**
 * Types `query` into the search box (one input event) and returns the ms to the first animation frame whose
 * count reads `expect`.
 */
function searchMs(page: Page, query: string, expect: string): Promise<number> {
  return page.evaluate(
    async ([query, expect]) => {
      const input = document.querySelector('#fleet-search') as HTMLInputElement;
      const since = performance.now();
      input.value = query!;
      input.dispatchEvent(new Event('input', { bubbles: true }));
      // Inline, not a named helper: tsx would wrap a named function in a `__name` call the page lacks.
      while (!(document.querySelector('.toolbar [aria-live]')?.textContent ?? '').startsWith(expect!))
        await new Promise((done) => requestAnimationFrame(done));
      return performance.now() - since;
    },
    [query, expect],
  );
}

/** Clicks the Agent column's heading and returns the ms to the first frame whose top row is `firstId`. */
function sortMs(page: Page, firstId: string): Promise<number> {
  return page.evaluate(async (firstId) => {
    const heading = [...document.querySelectorAll('th button.sort')].find((b) => b.textContent?.startsWith('Agent'));
    const since = performance.now();
    (heading as HTMLButtonElement).click();
    while (document.querySelector('tbody tr[data-agent-id]')?.getAttribute('data-agent-id') !== firstId)
      await new Promise((done) => requestAnimationFrame(done));
    return performance.now() - since;
  }, firstId);
}

export async function consoleFleetBench(
  options: { runs?: number } = {},
  cleanups: Array<() => unknown> = [],
): Promise<ConsoleFleetFigures | { skipped: string }> {
  const runs = options.runs ?? 5;
  const browser = await launch();
  if (typeof browser === 'string') return { skipped: browser.replace(/: the console browser test did not run$/, '') };
  const later: Array<() => unknown> = [];
  cleanups.push(async () => {
    for (const fn of later.reverse()) await fn();
  });
  const t = { teardown: (fn: () => unknown) => void later.push(fn) };
  t.teardown(() => browser.close());
  const uiDir = tempDir(t, 'agt-bench-console-ui-');
  const { buildConsole } = (await import(pathToFileURL(join(ROOT, 'scripts/build-console.mjs')).href)) as {
    buildConsole(dir: string): Promise<number>;
  };
  await buildConsole(uiDir);
  const { extensions } = shippedManifest({ console: { uiDir } });
  const d = await runDaemon(t, {
    extensions: {
      extensions: extensions.map((entry: any) => (entry.name === 'compute' ? { ...entry, enabled: false } : entry)),
    },
  });
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const login = await d.request('POST', '/console/login-codes');
  if (login.status !== 201)
    throw new Error(`console/login-codes answered ${login.status}: ${JSON.stringify(login.body)}`);
  const first = await context.newPage();
  await first.goto(`${d.url}${login.body.path}`);
  await first.getByRole('heading', { name: 'Fleet' }).waitFor();
  await first.close();

  const agents = fleetOf(AGENTS);
  const samples = {
    firstScreenMs: [] as number[],
    rowsInDom: [] as number[],
    searchMs: [] as number[],
    sortMs: [] as number[],
  };
  const frames: number[] = [];
  for (let run = 0; run < runs; run++) {
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const servedAt = await serveAgents(page, agents);
    await page.goto(`${d.url}/console/#/fleet`);
    await page.locator('tr[data-agent-id="agent-id-0"]').waitFor();
    samples.firstScreenMs.push(Date.now() - servedAt());
    samples.rowsInDom.push(await page.locator('tr[data-agent-id]').count());
    await page.getByText(`${AGENTS} of ${AGENTS} agents`).waitFor();
    frames.push(...(await scrollFrames(page)));
    await page.locator(`tr[data-agent-id="agent-id-${AGENTS - 1}"]`).waitFor();
    samples.searchMs.push(await searchMs(page, 'agent-0500', `1 of ${AGENTS}`));
    await searchMs(page, '', `${AGENTS} of ${AGENTS}`);
    await page.locator('.vscroll').evaluate((box) => (box.scrollTop = 0));
    samples.sortMs.push(await sortMs(page, `agent-id-${AGENTS - 1}`));
    await page.close();
  }
  const median = (values: number[]) => percentile(values, 50);
  return {
    agents: AGENTS,
    runs,
    firstScreenMs: median(samples.firstScreenMs),
    rowsInDom: median(samples.rowsInDom),
    frameMedianMs: median(frames),
    frameP95Ms: percentile(frames, 95),
    frameMaxMs: Math.max(...frames),
    searchMs: median(samples.searchMs),
    sortMs: median(samples.sortMs),
    samples: { ...samples, frames: frames.length },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5);
  const cleanups: Array<() => unknown> = [];
  const before = loadavg()[0]!;
  await runThenClean(async () => {
    const figures = await consoleFleetBench({ runs }, cleanups);
    process.stdout.write(`${JSON.stringify({ ...figures, loadAverage: { before, after: loadavg()[0] } }, null, 2)}\n`);
  }, cleanups);
}
