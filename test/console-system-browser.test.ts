/**
 * The console's System view operations in headless Chromium (helpers/console-browser.ts) against one built daemon:
 * backups (Run now, the backups folder's files listed with their agent, size and sealed state, a listed file
 * restored as a new agent) and an extension turned off and on from its card (off at once: its routes answer 503;
 * on at the next start). axe-clean in light and dark at 1280 and 390 px. Skips, saying why, without Chromium.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import type { Browser } from 'playwright-core';
import { createAgentFile } from './helpers/agent-file.js';
import { axeSerious, launch, loggedIn } from './helpers/console-browser.js';
import { ROOT, runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';

const browserOrSkip = await launch();
const skip = typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(skip);

t.test('System: backups run, listed and restored; an extension turned off and on', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const uiDir = tempDir(t, 'agt-console-ui-');
  const { buildConsole } = (await import(pathToFileURL(join(ROOT, 'scripts/build-console.mjs')).href)) as {
    buildConsole(dir: string): Promise<number>;
  };
  await buildConsole(uiDir);
  const agentsDir = tempDir(t, 'agt-console-agents-');
  const { extensions } = shippedManifest({ console: { uiDir }, mesh: { mdns: { enabled: false } } });
  const d = await runDaemon(t, {
    settings: { agentsFolder: agentsDir },
    extensions: {
      extensions: extensions.map((entry: any) => (entry.name === 'compute' ? { ...entry, enabled: false } : entry)),
    },
  });
  // A restore as a new agent gives it keys of its own: the owner identity signs them.
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'console system passphrase' })).status, 201);
  const filePath = await createAgentFile(agentsDir, { name: 'kept' });
  const loaded = await d.request('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200);

  const pageErrors: string[] = [];
  const page = await loggedIn(browser, d, pageErrors);
  await page.evaluate(() => (location.hash = '#/system'));
  const backups = page.locator('section[aria-labelledby="backups-title"]');
  await backups.getByText('No backup files in').waitFor();

  await backups.getByRole('button', { name: 'Run now' }).click();
  await backups.getByRole('status').getByText('Backed up 1 agent file(s).').waitFor();
  const row = backups.locator('table.backup-files tbody tr');
  await row.first().waitFor();
  t.equal(await row.count(), 1, 'the new copy is listed');
  t.match(await row.first().innerText(), /\d+ KB\s+not sealed/, 'its size, not sealed');
  const listed = (await d.request('GET', '/backups/files')).body.files;
  t.equal(listed.length, 1);
  t.equal(await row.first().getAttribute('data-backup'), listed[0].name);

  await backups.getByLabel('Restore as a new agent (new id and keys)').check();
  await row
    .first()
    .getByRole('button', { name: `Restore ${listed[0].name}` })
    .click();
  await backups
    .getByRole('status')
    .getByText(/^Restored kept to /)
    .waitFor();
  const agents = (await d.request('GET', '/agents')).body as Array<{ id: string; name: string }>;
  t.equal(agents.filter((agent) => agent.name === 'kept').length, 2, 'restored beside the original, as a new agent');

  const card = page.locator('[data-extension="telemetry"]');
  await card.getByRole('button', { name: 'Turn off telemetry' }).click();
  await card.getByText('Turned off: stopped, its routes answer 503.').waitFor();
  await card.getByText('This extension is off.').waitFor();
  t.equal((await d.request('GET', '/metrics')).status, 503, 'its routes answer 503');
  await card.getByRole('button', { name: 'Turn on telemetry' }).click();
  await card.getByText('Turned on: it loads at the next start of the daemon.').first().waitFor();
  await card.getByRole('button', { name: 'Turn off telemetry' }).waitFor();
  t.equal(await card.locator('.ext-name + *').innerText(), 'On at next start', 'the card follows the event');
  t.match((await d.request('GET', '/runtime/extensions/telemetry')).body, { enabled: true, state: 'disabled' });
  t.equal(await page.locator('[data-extension="console"] button', { hasText: /^Turn/ }).count(), 0, 'not the console');

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [1280, 390]) {
      await page.emulateMedia({ colorScheme });
      await page.setViewportSize({ width, height: 800 });
      t.same(await axeSerious(page, colorScheme === 'dark'), [], `axe: System, ${colorScheme}, ${width} px`);
    }
  t.same(pageErrors, [], 'no uncaught page error');
});
