import t, { type Test } from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { LINKER } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';

const driver = await startToolDriver(t);
let d = await runDaemon(t, {
  extensions: shippedManifest({ mcp: { elicitationTimeoutMs: 30_000 } }),
  settings: {
    providers: [driver.provider],
    mcpServers: [LINKER],
  },
});
let log = await eventLog(t, d);
const filePath = await createAgentFile(tempDir(t, 'agt-mcp-url-restart-'), {
  model: driver.model,
  mcp: { servers: [{ name: 'linker', transport: 'stdio' }] },
});
const load = async () => {
  const loaded = await d.request('POST', '/agents/load', { filePath });
  if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
  return loaded.body.id as string;
};
const agentId = await load();

const of = <T>(event: UmbilicalEvent) => event.payload as T;
type Ask = { kind: string; requestId: string; question: string };

/** The next ask (from event index `from`) other than `not`, and the link it shows. */
async function nextAsk(from: number, not?: string): Promise<Ask & { link: string }> {
  const event = await log.waitFor(
    (e) => e.event_type === 'hil.requested' && of<Ask>(e).kind === 'ask' && of<Ask>(e).requestId !== not,
    'an ask',
    { from },
  );
  const payload = of<Ask>(event);
  const link = payload.question.match(/Link: (\S+)/)?.[1];
  if (!link) throw new Error(`the ask shows no link: ${payload.question}`);
  return { ...payload, link };
}

/** Starts `tool`, waits for its ask, restarts the daemon; the ask from before and the one after. */
async function askAcrossRestart(test: Test, tool: string) {
  const result = driver.run(d, agentId, tool, {});
  const before = await nextAsk(log.events.length);
  d = await d.restart();
  // Closed with the file, not with this test: the next test reads it too.
  log = await eventLog(t, d);
  test.equal(await load(), agentId, 'the agent loads again');
  const after = await nextAsk(0, before.requestId);
  const superseded = await log.waitFor(
    (e) => e.event_type === 'hil.resolved' && of<{ id: string }>(e).id === before.requestId,
    'the old ask closed',
  );
  test.equal(of<{ resolution: string }>(superseded).resolution, 'superseded', 'the old ask is superseded');
  test.not(after.link, before.link, 'the restarted server gave a new link');
  const tasks = (await d.request('GET', '/tasks?kind=ask')).body.tasks as Array<{ id: string; question: string }>;
  test.same(
    tasks.map((task) => [task.id, task.question.match(/Link: (\S+)/)?.[1]]),
    [[after.requestId, after.link]],
    "the owner's task shows the new link, and only it",
  );
  test.equal(
    (await d.request('POST', `/agents/${agentId}/asks/${before.requestId}/respond`, { answer: 'done' })).status,
    404,
    'the old ask takes no answer',
  );
  return { result, after };
}

for (const [what, tool, asked, answer] of [
  [
    'elicitation/create in URL mode',
    'mcp_linker_connect_calendar',
    /asks you to open a link: Connect your calendar/,
    (id: string) => `connected ${id}`,
  ],
  [
    '-32042',
    'mcp_linker_premium_report',
    /needs you to open a link before tool premium_report can run/,
    (id: string) => `the report, paid by ${id}`,
  ],
] as const) {
  t.test(`${what}: after a restart the owner is shown the new link`, async (t) => {
    const { result, after } = await askAcrossRestart(t, tool);
    t.match(after.question, asked);
    const from = log.events.length;
    const respond = await d.request('POST', `/agents/${agentId}/asks/${after.requestId}/respond`, { answer: 'done' });
    t.equal(respond.status, 200);
    await log.waitFor((e) => e.event_type === 'mcp.elicitation.waiting', 'the call waits for the server', { from });
    t.equal((await fetch(after.link)).status, 200, 'the owner opens the new link');
    const id = decodeURIComponent(after.link.slice(after.link.indexOf('/done/') + 6));
    t.equal(await result, answer(id), "the turn ends with the server's answer, the call made with the new link");
  });
}
