import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { LINKER, loadWithServers } from './helpers/mcp.js';
import { startToolDriver } from './helpers/tool-driver.js';

const TIMEOUT_MS = 3000;
const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  extensions: shippedManifest({ mcp: { elicitationTimeoutMs: TIMEOUT_MS } }),
  settings: {
    providers: [driver.provider],
    mcpServers: [LINKER],
  },
});
const log = await eventLog(t, d);
const agentId = await loadWithServers(d, tempDir(t, 'agt-mcp-url-'), driver.model, ['linker']);

const of = <T>(event: UmbilicalEvent) => event.payload as T;
type Wait = { server: string; tool: string; call_id: string | null; elicitation_id: string; outcome?: string };

/** The next ask of the agent (from event index `from`) and the link it shows. */
async function nextAsk(from: number): Promise<{ requestId: string; question: string; link: string }> {
  const event = await log.waitFor(
    (e) => e.event_type === 'hil.requested' && of<{ kind: string }>(e).kind === 'ask',
    'an ask',
    { from },
  );
  const payload = of<{ requestId: string; question: string }>(event);
  const link = payload.question.match(/Link: (\S+)/)?.[1];
  if (!link) throw new Error(`the ask shows no link: ${payload.question}`);
  return { ...payload, link };
}
const answer = (requestId: string, text: string) =>
  d.request('POST', `/agents/${agentId}/asks/${requestId}/respond`, { answer: text });
const waitEvent = (type: string, from: number, id?: string) =>
  log.waitFor((e) => e.event_type === type && (id === undefined || of<Wait>(e).elicitation_id === id), type, { from });
const started = (from: number, tool: string) =>
  log.waitFor((e) => e.event_type === 'tool.started' && of<{ tool: string }>(e).tool === tool, 'tool.started', {
    from,
  });
const serverLogs = async () => (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers[0].logs as string[];

t.test('elicitation/create in URL mode: the call waits for the server to confirm', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_linker_connect_calendar', {});
  const call = of<{ call_id: string }>(await started(from, 'mcp_linker_connect_calendar'));
  const ask = await nextAsk(from);
  t.match(ask.question, /MCP server linker \(during tool connect_calendar\) asks you to open a link: Connect/);
  t.match(ask.link, /^http:\/\/127\.0\.0\.1:\d+\/done\/cal-/);
  t.equal((await answer(ask.requestId, 'done')).status, 200);
  const waiting = of<Wait>(await waitEvent('mcp.elicitation.waiting', from));
  t.match(waiting, { server: 'linker', tool: 'connect_calendar', call_id: call.call_id });
  const id = waiting.elicitation_id;
  t.equal(ask.link, `${ask.link.slice(0, ask.link.indexOf('/done/'))}/done/${id}`, 'the id of the link');
  t.notOk(
    log.events.slice(from).some((e) => e.event_type === 'mcp.elicitation.completed'),
    'not confirmed before the link is opened',
  );
  t.equal((await fetch(ask.link)).status, 200, 'the owner opens the link');
  const completed = of<Wait>(await waitEvent('mcp.elicitation.completed', from));
  t.match(completed, { server: 'linker', call_id: call.call_id, elicitation_id: id, outcome: 'completed' });
  t.equal(await result, `connected ${id}`);
  t.notOk(
    log.events.some(
      (e) => e.event_type.startsWith('mcp.elicitation.') && of<Wait>(e).elicitation_id === 'never-issued',
    ),
    'a completion of an id agt never got is not announced',
  );
  const logs = await serverLogs();
  t.ok(
    logs.some((line) => /ignored a completion of elicitation never-issued/.test(line)),
    'it is ignored',
  );
  t.ok(
    logs.some((line) => line.includes(`elicitation ${id} is complete`)),
    'the real one is noted',
  );
});

t.test('-32042: the link is asked, confirmed, and the call made again', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_linker_premium_report', {});
  const call = of<{ call_id: string }>(await started(from, 'mcp_linker_premium_report'));
  const ask = await nextAsk(from);
  t.match(ask.question, /MCP server linker needs you to open a link before tool premium_report can run:/);
  t.match(ask.question, /- Pay for the report\n {2}Link: http:\/\/127\.0\.0\.1:\d+\/done\/pay-/);
  t.equal((await answer(ask.requestId, 'done')).status, 200);
  const waiting = of<Wait>(await waitEvent('mcp.elicitation.waiting', from));
  t.match(waiting, { server: 'linker', tool: 'premium_report', call_id: call.call_id });
  t.equal((await fetch(ask.link)).status, 200, 'the owner opens the link');
  const completed = of<Wait>(await waitEvent('mcp.elicitation.completed', from, waiting.elicitation_id));
  t.equal(completed.outcome, 'completed');
  t.equal(await result, `the report, paid by ${waiting.elicitation_id}`, 'the call ran again and succeeded');
});

t.test('-32042 declined: the call fails saying so', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_linker_premium_report', {});
  const ask = await nextAsk(from);
  await answer(ask.requestId, 'Decline');
  t.match(await result, /MCP server linker could not run premium_report: the owner declined opening the link/);
  t.notOk(
    log.events.slice(from).some((e) => e.event_type === 'mcp.elicitation.waiting'),
    'nothing waits',
  );
});

t.test('-32042 accepted but never confirmed: the call fails after the owner’s limit', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_linker_premium_report', {});
  const ask = await nextAsk(from);
  await answer(ask.requestId, 'done');
  const waiting = of<Wait>(await waitEvent('mcp.elicitation.waiting', from));
  const completed = of<Wait>(
    await log.waitFor(
      (e) => e.event_type === 'mcp.elicitation.completed' && of<Wait>(e).elicitation_id === waiting.elicitation_id,
      'timed out',
      { from, ms: TIMEOUT_MS + 10_000 },
    ),
  );
  t.equal(completed.outcome, 'timed_out');
  t.match(await result, new RegExp(`did not confirm the elicitation within ${TIMEOUT_MS} ms`));
  t.equal((await fetch(ask.link)).status, 200, 'a late visit');
  const logs = await serverLogs();
  t.ok(
    logs.some((line) => line.includes(`ignored a completion of elicitation ${waiting.elicitation_id}`)),
    'its late completion is ignored: the wait is over',
  );
});
