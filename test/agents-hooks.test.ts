/**
 * Kernel internals, so in process: the registry's calls into the runtime (replaced by a fake that records
 * them or fails attach), extension lifecycle hooks and inbox sources contributed through the contributions
 * API, the order of those against the bus's events, and `kernel.agents`, the service extensions see.
 */
import t from 'tap';
import type { AgentConfig } from '../contracts/agent-config.js';
import type { LoadedAgent } from '../kernel/agents/loaded-agent.js';
import type { AgentRuntimeHooks } from '../kernel/agents/runtime-hooks.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, replaceRuntimeHooks, tempDir } from './helpers/daemon.js';

function fakeRuntime(calls: string[], options: { failAttach?: boolean } = {}): AgentRuntimeHooks {
  return {
    async attach(agent: LoadedAgent) {
      calls.push(`attach ${agent.name}`);
      if (options.failAttach) throw new Error('no executor for you');
    },
    configChanged(agent: LoadedAgent, previous: Readonly<AgentConfig>) {
      calls.push(`config ${previous.description} -> ${agent.config.description}`);
    },
    async detach(agent: LoadedAgent, { graceMs, reason }) {
      calls.push(`detach ${agent.name} ${graceMs} ${reason}`);
    },
    status: () => ({ runtimeState: 'thinking', targetState: 'idle' }),
  };
}

t.test('the registry drives the runtime, lifecycle hooks, inbox sources and events in order', async (t) => {
  const d = await bootDaemon(t);
  const kernel = d.daemon.kernel;
  const calls: string[] = [];
  replaceRuntimeHooks(d.daemon, fakeRuntime(calls));
  kernel.bus.subscribe((event) => {
    if (event.event_type.startsWith('agent.')) calls.push(`event ${event.event_type}`);
  });
  const contribute = kernel.contributions.forExtension('test-ext');
  contribute.lifecycle({
    loaded: (agent) => void calls.push(`hook loaded ${agent.name}`),
    unloaded: (agent) => void calls.push(`hook unloaded ${agent.name}`),
  });
  contribute.inboxSource({
    name: 'test-source',
    attach: async (agent, deliver) => {
      calls.push(`source attach ${agent.name}`);
      await deliver({ source: 'channel:test', text: 'hello from the source' });
      return () => void calls.push(`source detach ${agent.name}`);
    },
  });

  const path = await createAgentFile(tempDir(t), { name: 'hooked', description: 'v1' });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path });
  t.same(calls.splice(0), ['attach hooked', 'event agent.loaded', 'hook loaded hooked', 'source attach hooked']);
  t.same(
    (await d.request('GET', `/agents/${ref.id}/inbox`)).body.messages.map((m: { text: string }) => m.text),
    ['hello from the source'],
  );

  const status = await d.request('GET', `/agents/${ref.id}/status`);
  t.same([status.body.runtimeState, status.body.targetState], ['thinking', 'idle'], 'status comes from the runtime');

  await d.request('PUT', `/agents/${ref.id}/config`, { ...ref.config, description: 'v2' });
  t.same(calls.splice(0), ['config v1 -> v2', 'event agent.config.changed']);

  await d.request('POST', `/agents/${ref.id}/stop`);
  t.same(
    calls.splice(0),
    ['source detach hooked', 'detach hooked 5000 stop', 'hook unloaded hooked', 'event agent.unloaded'],
    'a running turn gets 5 s',
  );

  // kernel.agents, the service extensions see.
  await d.request('POST', '/agents/load', { filePath: path });
  calls.length = 0;
  t.same(
    kernel.agents.list().map((view) => view.name),
    ['hooked'],
  );
  t.equal(kernel.agents.find('hooked')?.id, ref.id);
  t.equal(kernel.agents.find('nobody'), undefined);
  t.equal(await kernel.agents.readCredential('nobody', 'x'), undefined);
  kernel.agents.log(ref.id, 'warn', 'from the service', { n: 1 });
  const logs = (await d.request('GET', `/agents/${ref.id}/logs`)).body.logs;
  t.same(
    [logs.at(-1).level, logs.at(-1).origin, logs.at(-1).message, logs.at(-1).data],
    ['warn', 'kernel', 'from the service', '{"n":1}'],
  );
  kernel.agentsFor('probe').log(ref.id, 'info', 'from an extension');
  const last = (await d.request('GET', `/agents/${ref.id}/logs`)).body.logs.at(-1);
  t.same([last.origin, last.message], ['probe', 'from an extension'], "an extension's rows carry its name");

  // Shutdown unloads in immediate mode (no grace).
  await d.daemon.shutdown('test');
  t.ok(calls.includes('detach hooked 0 shutdown'));
});

t.test('a runtime that cannot attach fails the load cleanly', async (t) => {
  const d = await bootDaemon(t);
  const restore = replaceRuntimeHooks(d.daemon, fakeRuntime([], { failAttach: true }));
  const path = await createAgentFile(tempDir(t), { name: 'unlucky' });
  const res = await d.request('POST', '/agents/load', { filePath: path });
  t.same([res.status, res.body.code, res.body.reason], [422, 'load_failed', 'attach_failed']);
  t.match(res.body.error, /no executor for you/);
  t.same((await d.request('GET', '/agents')).body, []);
  restore();
  replaceRuntimeHooks(d.daemon, fakeRuntime([]));
  t.equal((await d.request('POST', '/agents/load', { filePath: path })).status, 200, 'lease and file were released');
});
