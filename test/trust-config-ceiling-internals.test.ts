/**
 * The owner's ceiling inside the kernel (test/trust-config-ceiling.test.ts covers it from outside): every
 * consumer and the extensions read the capped config, an extension's write of the applied config keeps
 * the file's own asks, and a limit left untyped applies the runtime's default. No client route shows
 * the applied config whole, so these read the kernel's registry in process.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';
import { limitOf } from '../kernel/runtime/types.js';

const h = await runtimeHarness(t, { noModel: true, settings: { agentCeiling: { limits: { sql_timeout_ms: 400 } } } });

t.test('every consumer reads the capped config, extensions too', async (t) => {
  const asks = {
    security: {
      fetch_allow_hosts: ['127.0.0.1:9', 'example.org'],
      allow_unsandboxed_commands: true,
      compute_network: true,
      compute_tier: 'isolated',
    },
    limits: { sql_timeout_ms: 60_000, tool_timeout_ms: 5_000 },
  };
  const id = await h.agent(asks as never);
  const agent = h.d.daemon.kernel.registry.resolve(id);
  t.match(agent.config, {
    security: {
      fetch_allow_hosts: [],
      allow_unsandboxed_commands: false,
      compute_network: false,
      compute_tier: 'isolated',
    },
    limits: { sql_timeout_ms: 400, tool_timeout_ms: 5_000 },
  });
  t.same(
    h.d.daemon.kernel.agents.find(id)!.config.security,
    agent.config.security,
    'extensions see the capped config too',
  );
});

t.test(
  "owner writes keep the file's own asks; a change through the applied config does not write caps back",
  async (t) => {
    const id = await h.agent({ limits: { sql_timeout_ms: 60_000 } });
    t.equal((await h.d.request('PATCH', `/agents/${id}/config`, { description: 'edited' })).status, 200);
    t.equal(
      (await h.d.request('GET', `/agents/${id}/config`)).body.config.limits.sql_timeout_ms,
      60_000,
      'the file still asks 60 s',
    );
    const agent = h.d.daemon.kernel.registry.resolve(id);
    await h.d.daemon.kernel.agents.updateConfig(id, { ...agent.config, description: 'from an extension' });
    t.equal(
      agent.fileConfig.limits.sql_timeout_ms,
      60_000,
      "an extension's write of the applied config keeps the file's value",
    );
    t.equal(agent.config.limits.sql_timeout_ms, 400);
  },
);

t.test('an untyped limit that is no positive number gets the default, the absent turn limit the maximum', async (t) => {
  const filePath = await createAgentFile(h.dir, {
    limits: { command_timeout_ms: 'soon', lambda_timeout_ms: -1 },
  } as never);
  const loaded = await h.d.request('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200, JSON.stringify(loaded.body));
  const applied = h.d.daemon.kernel.registry.resolve(loaded.body.id).config;
  t.same(
    [
      limitOf(applied, 'command_timeout_ms', 10_000),
      limitOf(applied, 'lambda_timeout_ms', 5_000),
      applied.limits.turn_timeout_ms,
    ],
    [10_000, 5_000, 3_600_000],
    'the defaults, and the maximum for the absent turn limit',
  );
});
