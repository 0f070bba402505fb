/**
 * An agent's own OAuth sign-in to an MCP registration whose sign-in is per agent, from the MCP tab of its view in
 * headless Chromium (helpers/console-browser.ts): one built daemon and a real OAuth-protected MCP server with its
 * authorization server (test/fixtures/mcp/oauth-server.mjs, which approves at once: the new tab follows its redirect
 * back to the daemon, as a browser does). The server is Not started without the sign-in, Connected after it, for
 * that agent only, and Not started again after Sign out; axe-clean. Skips, saying why, without Chromium.
 */
import t from 'tap';
import type { Browser } from 'playwright-core';
import { createAgentFile } from './helpers/agent-file.js';
import { axeSerious, launch, loggedIn } from './helpers/console-browser.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { startOAuthFixture } from './helpers/oauth-fixture.js';

const browserOrSkip = await launch();
const skip = typeof browserOrSkip === 'string' ? browserOrSkip : false;
if (skip) t.comment(skip);

t.test('an agent signs in to a per-agent MCP server from its view, then out', { skip }, async (t) => {
  const browser = browserOrSkip as Browser;
  t.teardown(() => browser.close());
  const mcpUrl = (await startOAuthFixture(t)).mcp;
  const { extensions } = shippedManifest({ mesh: { mdns: { enabled: false } } });
  const d = await runDaemon(t, {
    settings: { mcpServers: [{ name: 'own', type: 'http', url: mcpUrl, oauth: { signIn: 'per-agent' } }] },
    extensions: {
      extensions: extensions.map((entry: any) => (entry.name === 'compute' ? { ...entry, enabled: false } : entry)),
    },
  });
  const dir = tempDir(t, 'agt-console-mcp-');
  const load = async (name: string) => {
    const filePath = await createAgentFile(dir, { name, mcp: { servers: [{ name: 'own', transport: 'http' }] } });
    const loaded = await d.request('POST', '/agents/load', { filePath });
    t.equal(loaded.status, 200, `${name} loaded`);
    return loaded.body.id as string;
  };
  const [alice, bob] = await Promise.all([load('alice'), load('bob')]);
  const signedIn = async (agent: string) =>
    (await d.request('GET', `/mcp/servers/own/login?agent=${agent}`)).body.signedIn as boolean;

  const pageErrors: string[] = [];
  const page = await loggedIn(browser, d, pageErrors);
  await page.evaluate((id) => (location.hash = `#/agent/${id}`), alice);
  await page.getByRole('button', { name: 'MCP', exact: true }).click();
  const server = page.locator('li[data-mcp-server="own"]');
  await server.getByRole('button', { name: 'Not started' }).waitFor();
  await server.getByText('not signed in', { exact: true }).waitFor();
  await server.getByText(/mcp_signin_required: not signed in for this agent/).waitFor();

  const opened = page.context().waitForEvent('page');
  await server.getByRole('button', { name: 'Sign in to own' }).click();
  const tab = await opened;
  // The new tab's round trip (authorization server, the daemon's callback, the token, the reconnect) takes a
  // few seconds on a busy machine: a wider bound than the page's default.
  await server.getByText('signed in', { exact: true }).waitFor({ timeout: 30_000 });
  await server.getByRole('button', { name: 'Connected' }).waitFor({ timeout: 30_000 });
  await tab.close();
  t.same([await signedIn(alice), await signedIn(bob)], [true, false], 'signed in for alice only');
  t.same(await axeSerious(page), [], 'axe: the MCP tab');

  await server.getByRole('button', { name: 'Sign out of own' }).click();
  await server.getByText('not signed in', { exact: true }).waitFor();
  await server.getByRole('button', { name: 'Not started' }).waitFor();
  t.equal(await signedIn(alice), false, 'signed out');
  t.same(pageErrors, [], 'no uncaught page error');
});
