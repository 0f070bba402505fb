/**
 * The owner's settings are the ceiling and an agent
 * file can only narrow them. A file asking for more (`security.fetch_allow_hosts` outside the owner's
 * list, `allow_unsandboxed_commands`, `compute_network`, `limits` above the maxima) is capped: the review
 * and the load answer list each cap, and what the agent does runs under the capped values (a loopback
 * fetch refused, a SQL statement stopped at the owner's maximum). The agent's own `sys_update_config`
 * cannot change the privilege-bearing fields unless the owner unlocks one in settings.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startFakeOpenAI } from './fakes/openai.js';
import { createAgentFile } from './helpers/agent-file.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';
import type { HarnessModel } from './fixtures/runtime/harness.js';
import { WireModel } from './fixtures/runtime/wire-model.js';

const RUNAWAY_QUERY =
  'WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3000000000) SELECT count(*) AS n FROM r';

const site = createServer((req, res) => res.end(`you asked for ${req.url}`));
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
const host = `127.0.0.1:${(site.address() as AddressInfo).port}`;

// A second provider the owner configured (its own key and bill): `pricey`, a second fake server.
const pricey = new WireModel();
const priceyServer = await startFakeOpenAI(t, pricey.script);
// One daemon: the owner's ceiling lowers the SQL maximum to 400 ms so a capped statement stops quickly.
const h = await wireDaemon(t, {
  settings: { agentCeiling: { limits: { sql_timeout_ms: 400 } } },
  providers: [{ id: 'pricey', type: 'openai-compatible', name: 'Pricey', baseUrl: priceyServer.baseUrl }],
});

/** Runs one turn whose model makes `calls`; the tool results of that turn, in order. */
async function turn(
  h: WireDaemon,
  id: string,
  calls: Array<{ name: string; args: Record<string, unknown> }>,
  model: Pick<HarnessModel, 'push' | 'calls'> = h.model,
) {
  model.push({ toolCalls: calls }, { text: 'done' });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId);
  return (
    model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as Array<{ content: string; isError?: boolean }>
  ).slice(-calls.length);
}

const ASKS = {
  security: {
    fetch_allow_hosts: [host, 'example.org'],
    allow_unsandboxed_commands: true,
    compute_network: true,
    compute_tier: 'isolated',
  },
  limits: {
    sql_timeout_ms: 60_000,
    tool_timeout_ms: 5_000,
    turn_timeout_ms: 90_000_000,
    max_llm_calls_per_turn: 5_000,
    max_tool_calls_per_turn: 50,
  },
};

t.test('a file asking for more than the owner allows is capped; the review and the load answer say what', async (t) => {
  const filePath = await createAgentFile(h.dir, {
    ...ASKS,
    tools: [
      { name: 'sys_fetch', enabled: true },
      { name: 'db_query', enabled: true },
    ],
  } as never);
  const expected = [
    { field: 'security.fetch_allow_hosts', asked: [host, 'example.org'], applied: [] },
    { field: 'security.allow_unsandboxed_commands', asked: true, applied: false },
    { field: 'security.compute_network', asked: true, applied: false },
    { field: 'limits.sql_timeout_ms', asked: 60_000, applied: 400 },
    { field: 'limits.turn_timeout_ms', asked: 90_000_000, applied: 3_600_000 },
    { field: 'limits.max_llm_calls_per_turn', asked: 5_000, applied: 200 },
  ];
  const review = await h.d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`);
  t.same(review.body.summary.capped, expected, 'the review lists every cap (limits within the maxima are not)');
  const loaded = await h.d.request('POST', '/agents/load', { filePath });
  t.equal(loaded.status, 200);
  t.same(loaded.body.capped, expected, 'the load answer lists the same');
  t.same(loaded.body.config.limits, ASKS.limits, "the answer's config is the file's own");
  const id = loaded.body.id as string;
  t.same((await h.d.request('GET', `/agents/${id}`)).body.capped, expected);

  // What the agent does runs under the capped values (every consumer reads them: trust-config-ceiling-internals).
  const [fetched, query] = await turn(h, id, [
    { name: 'sys_fetch', args: { url: `http://${host}/secret` } },
    { name: 'db_query', args: { sql: RUNAWAY_QUERY } },
  ]);
  t.match(fetched!.content, /refuses 127\.0\.0\.1.*loopback/, "a host outside the owner's list stays refused");
  t.match(
    query!.content,
    /time limit of 400 ms \(limits\.sql_timeout_ms\)/,
    "the statement stops at the owner's maximum, not the file's 60 s",
  );
  const logs = (await h.d.request('GET', `/agents/${id}/logs?limit=100`)).body;
  t.match(
    JSON.stringify(logs),
    /limits\.sql_timeout_ms is capped by the owner's settings/,
    "the agent's log says so at load",
  );

  // The owner raises the ceiling for this agent: the file's ask applies at once, up to the new ceiling.
  const changed = h.waitFor((e) => e.event_type === 'agent.config.changed' && e.agent_id === id, 'config changed');
  t.equal(
    (
      await h.d.request('PATCH', '/settings', {
        agentCeilings: { [id]: { fetchAllowHosts: ['127.0.0.1'], limits: { sql_timeout_ms: 1_000 } } },
      })
    ).status,
    200,
  );
  t.match((await changed).payload, { fields: ['limits', 'security'] });
  const raised = (await h.d.request('GET', `/agents/${id}`)).body.capped;
  t.same(
    raised.find((c: { field: string }) => c.field === 'security.fetch_allow_hosts'),
    { field: 'security.fetch_allow_hosts', asked: [host, 'example.org'], applied: [host] },
    "an owner entry without a port covers the file's host:port; example.org stays out",
  );
  t.same(
    raised.find((c: { field: string }) => c.field === 'limits.sql_timeout_ms'),
    { field: 'limits.sql_timeout_ms', asked: 60_000, applied: 1_000 },
  );
  const [allowed] = await turn(h, id, [{ name: 'sys_fetch', args: { url: `http://${host}/now` } }]);
  t.match(allowed!.content, /you asked for \/now/);
  t.equal((await h.d.request('PATCH', '/settings', { agentCeilings: null })).status, 200);
});

t.test('the start answer lists the caps too', async (t) => {
  const filePath = await createAgentFile(h.dir, { limits: { sql_timeout_ms: 30_000 } });
  t.equal((await h.d.request('POST', '/agents/review/accept', { filePath })).status, 200);
  const started = await h.d.request('POST', `/agents/${encodeURIComponent(filePath)}/start`);
  t.equal(started.status, 200);
  t.same(
    [started.body.loaded, started.body.capped, started.body.refused],
    [true, [{ field: 'limits.sql_timeout_ms', asked: 30_000, applied: 400 }], []],
  );
});

t.test(
  "the agent's own sys_update_config cannot change privilege-bearing fields unless the owner unlocks them",
  async (t) => {
    const id = await h.agent({ tools: [{ name: 'sys_update_config', enabled: true }] });
    const patches: Record<string, unknown> = {
      mcp: { servers: [{ name: 'ownertool', transport: 'stdio', env: { GIT_PAGER: 'x' } }] },
      security: { allow_unsandboxed_commands: true },
      limits: { sql_timeout_ms: 60_000 },
      serving: { visibility: 'public' },
      adapters: { telegram: { enabled: true } },
      providers: [{ id: 'evil', type: 'openai', name: 'Evil', baseUrl: 'http://127.0.0.1:9' }],
      ws_connections: [{ url: 'ws://127.0.0.1:9' }],
    };
    const results = await turn(
      h,
      id,
      Object.entries(patches).map(([key, value]) => ({ name: 'sys_update_config', args: { patch: { [key]: value } } })),
    );
    for (const [index, key] of Object.keys(patches).entries()) {
      t.equal(results[index]!.isError, true, `${key} refused`);
      t.match(results[index]!.content, new RegExp(`${key} is locked by the owner`));
    }
    const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
    t.same(
      [
        config.mcp,
        config.serving,
        config.adapters,
        config.providers,
        config.ws_connections,
        config.security,
        config.limits,
      ],
      [undefined, undefined, undefined, undefined, undefined, {}, {}],
      'nothing changed',
    );

    // Unlocked by the owner (a daemon setting: no file can unlock itself), a change goes through, still capped.
    t.equal((await h.d.request('PATCH', '/settings', { agentConfigUnlocks: { [id]: ['limits'] } })).status, 200);
    const [limits, security] = await turn(h, id, [
      { name: 'sys_update_config', args: { patch: { limits: { sql_timeout_ms: 60_000 } } } },
      { name: 'sys_update_config', args: { patch: { security: { allow_unsandboxed_commands: true } } } },
    ]);
    t.notOk(limits!.isError, limits!.content);
    t.match(security!.content, /security is locked by the owner/, 'only the unlocked field');
    t.same(
      (await h.d.request('GET', `/agents/${id}`)).body.capped,
      [{ field: 'limits.sql_timeout_ms', asked: 60_000, applied: 400 }],
      'the ceiling still caps an unlocked field',
    );
    t.equal(
      (await h.d.request('PATCH', '/settings', { agentConfigUnlocks: { [id]: ['id'] } })).status,
      400,
      'only unlockable fields',
    );
    t.equal(
      (await h.d.request('PATCH', '/settings', { agentCeiling: { limits: { sql_timeout_ms: 0 } } })).status,
      400,
      'a bad ceiling is refused',
    );
  },
);

t.test(
  'an owner entry with a port covers only that port; a file entry without a port needs an owner entry without one',
  async (t) => {
    const { capConfig, ceilingFor } = await import('../kernel/agents/ceiling.js');
    const ceiling = ceilingFor(
      { agentCeiling: { fetchAllowHosts: ['a.example:8080', 'b.example', '[fd00::1]:443'] } },
      'x',
    );
    const config = {
      security: {
        fetch_allow_hosts: [
          'a.example:8080',
          'a.example:9090',
          'a.example',
          'B.example:1',
          'fd00::1',
          '[fd00::1]:443',
          'c.example',
        ],
      },
      limits: {},
    } as never;
    t.same(capConfig(config, ceiling).config.security.fetch_allow_hosts, [
      'a.example:8080',
      'B.example:1',
      '[fd00::1]:443',
    ]);
    t.equal(
      ceilingFor({ agentCeilings: {} }, '__proto__').allowUnsandboxedCommands,
      false,
      'an id such as __proto__ reads no inherited property',
    );
  },
);

t.test(
  "a limit the file leaves out, or gives as a string, zero or negative, never gets more than the owner's maximum",
  async (t) => {
    const { capConfig, ceilingFor } = await import('../kernel/agents/ceiling.js');
    const cap = (limits: Record<string, unknown>, settings = {}) =>
      capConfig({ id: 'x', security: {}, limits } as never, ceilingFor(settings, 'x'));
    // turn_timeout_ms has no runtime default (no limit at all): the owner's maximum (1 h by default) applies.
    t.equal(cap({}).config.limits.turn_timeout_ms, 3_600_000);
    t.same(cap({}).capped, [], 'not listed as capped when the file said nothing');
    const odd = cap(
      { turn_timeout_ms: -1, command_timeout_ms: 0, sql_timeout_ms: '60000' },
      { agentCeiling: { limits: { sql_timeout_ms: 500, command_timeout_ms: 1_000 } } },
    );
    t.equal(odd.config.limits.turn_timeout_ms, 3_600_000);
    t.equal(
      odd.config.limits.command_timeout_ms,
      1_000,
      "the runtime's 10 s default is above this owner's 1 s maximum",
    );
    t.equal(odd.config.limits.sql_timeout_ms, 500, "a string is no value: the owner's 500 ms, not the runtime's 2 s");
    t.same(odd.capped.map((c: { field: string }) => c.field).sort(), [
      'limits.command_timeout_ms',
      'limits.sql_timeout_ms',
      'limits.turn_timeout_ms',
    ]);
    t.equal(
      cap({}).config.limits.sql_timeout_ms,
      undefined,
      "a default within the owner's maximum stays the runtime's",
    );
  },
);

t.test(
  'an invalid value of a typed limit refuses the file at load (422); an untyped one counts as absent',
  async (t) => {
    // The schema types sql_timeout_ms, tool_timeout_ms, turn_timeout_ms and the per-turn call counts: the
    // file is refused, naming the field, rather than loaded under a default (docs/security.md).
    const refusals: Array<[string, unknown]> = [
      ['sql_timeout_ms', 'soon'],
      ['sql_timeout_ms', 60_001],
      ['turn_timeout_ms', 0],
      ['tool_timeout_ms', -5],
      ['max_llm_calls_per_turn', 1.5],
      ['max_tool_calls_per_turn', -1],
    ];
    for (const [name, value] of refusals) {
      const filePath = await createAgentFile(h.dir, { limits: { [name]: value } } as never);
      const loaded = await h.d.request('POST', '/agents/load', { filePath });
      t.match(
        loaded,
        { status: 422, body: { code: 'load_failed', reason: 'invalid_config', path: `/limits/${name}` } },
        `${name}: ${JSON.stringify(value)}`,
      );
    }
    // lambda_timeout_ms and command_timeout_ms are not typed: a value that is not a positive number is no
    // value, and the runtime's default (or the owner's maximum, when lower) applies.
    const filePath = await createAgentFile(h.dir, {
      limits: { command_timeout_ms: 'soon', lambda_timeout_ms: -1 },
    } as never);
    const loaded = await h.d.request('POST', '/agents/load', { filePath });
    t.equal(loaded.status, 200, JSON.stringify(loaded.body));
    t.same(
      loaded.body.capped,
      [],
      'their defaults are within the maxima: nothing capped (the values applied: trust-config-ceiling-internals)',
    );
  },
);

t.test(
  "which provider it runs on: the agent's own sys_update_config keeps to its providers and the owner's allowed set",
  async (t) => {
    // `pricey` is the second fake server configured above.
    const loops = [{ name: 'side', goal: 'g', enabled: true, autostart: false }];
    const id = await h.agent({ tools: [{ name: 'sys_update_config', enabled: true }], loops });
    const config = async () => (await h.d.request('GET', `/agents/${id}/config`)).body.config;
    const refused = await turn(h, id, [
      { name: 'sys_update_config', args: { patch: { model: { provider: 'pricey', model_id: 'big-model' } } } },
      { name: 'sys_update_config', args: { patch: { loops: [{ ...loops[0], model: { provider: 'pricey' } }] } } },
    ]);
    t.equal(refused[0]!.isError, true);
    t.match(
      refused[0]!.content,
      /owner lock: model\.provider is locked by the owner: this agent may not move to provider "pricey"/,
      'refused, naming the field',
    );
    t.match(refused[0]!.content, /agentCeilings\.<agent id>\.providers/, 'says how the owner allows it');
    t.match(
      refused[1]!.content,
      /loops\.side\.model\.provider is locked by the owner/,
      "a loop's own model cannot name another provider either",
    );
    t.same(
      [(await config()).model, (await config()).loops[0].model],
      [{ provider: 'local', model_id: 'test-model' }, undefined],
      'nothing changed',
    );
    t.equal(pricey.calls.length, 0, 'no call reached the other provider');

    // The model id within its provider stays the agent's.
    const [sameProvider] = await turn(h, id, [
      {
        name: 'sys_update_config',
        args: { patch: { model: { provider: 'local', model_id: 'smaller-model', max_tokens: 500 } } },
      },
    ]);
    t.notOk(sameProvider!.isError, sameProvider!.content);
    t.same((await config()).model, { provider: 'local', model_id: 'smaller-model', max_tokens: 500 });

    // The owner allows a set for this agent: a move within it goes through (the turn's next call runs on
    // it), one outside it does not.
    t.equal(
      (await h.d.request('PATCH', '/settings', { agentCeilings: { [id]: { providers: ['pricey'] } } })).status,
      200,
    );
    t.teardown(() => h.d.request('PATCH', '/settings', { agentCeilings: null }));
    h.model.push({
      toolCalls: [
        { name: 'sys_update_config', args: { patch: { model: { provider: 'pricey', model_id: 'big-model' } } } },
      ],
    });
    pricey.push({ text: 'now on pricey' });
    t.equal(
      (await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId)).event_type,
      'turn.completed',
    );
    t.equal(pricey.calls.length, 1);
    t.match(pricey.calls[0]!.messages.at(-1), { role: 'tool', content: 'updated model' });
    t.equal((await config()).model.provider, 'pricey');
    const [elsewhere, back] = await turn(
      h,
      id,
      [
        { name: 'sys_update_config', args: { patch: { loops: [{ ...loops[0], model: { provider: 'other' } }] } } },
        // Back to a provider its config no longer names, outside the allowed set: refused like any other.
        { name: 'sys_update_config', args: { patch: { model: { provider: 'local', model_id: 'test-model' } } } },
      ],
      pricey,
    );
    t.match(
      elsewhere!.content,
      /loops\.side\.model\.provider is locked by the owner: this agent may not move to provider "other"/,
    );
    t.match(back!.content, /may not move to provider "local"/);
    t.equal(
      (await h.d.request('PATCH', '/settings', { agentCeilings: { [id]: { providers: [''] } } })).status,
      400,
      'a malformed list is refused',
    );
    // The owner's own config route is not bound by the lock.
    t.equal(
      (await h.d.request('PATCH', `/agents/${id}/config`, { model: { provider: 'local', model_id: 'test-model' } }))
        .status,
      200,
    );
  },
);

t.test(
  "its triggers: command targets are the owner's unless unlocked; agent-scope and lambda targets stay the agent's",
  async (t) => {
    const ownerCommand = { scope: 'system' as const, command: 'echo owner' };
    const id = await h.agent({
      tools: [{ name: 'sys_update_config', enabled: true }],
      triggers: {
        on_logs: { enabled: true, targets: [ownerCommand] },
        on_outbox: { enabled: false, targets: [{ scope: 'system', command: 'echo dormant' }] },
      },
    });
    const triggers = async () => (await h.d.request('GET', `/agents/${id}/config`)).body.config.triggers;
    const before = await triggers();
    const patches = {
      'a new command target': {
        ...before,
        on_timer: { enabled: true, targets: [{ scope: 'system', command: 'cat /etc/hostname' }] },
      },
      'a changed command': {
        ...before,
        on_logs: { enabled: true, targets: [{ scope: 'system', command: 'echo mine' }] },
      },
      'the same command with a new filter': {
        ...before,
        on_logs: { enabled: true, targets: [{ ...ownerCommand, filter: { level: 'error' } }] },
      },
      'a command moved to another trigger': {
        on_chat: { enabled: true, targets: [ownerCommand] },
        on_outbox: before.on_outbox,
      },
      'a command twice': { ...before, on_logs: { enabled: true, targets: [ownerCommand, ownerCommand] } },
      'an agent-scope target carrying a command': {
        ...before,
        on_chat: { enabled: true, targets: [{ scope: 'agent', command: 'echo x' }] },
      },
      "a disabled owner's command enabled": {
        ...before,
        on_outbox: { enabled: true, targets: before.on_outbox.targets },
      },
    };
    const results = await turn(
      h,
      id,
      Object.values(patches).map((value) => ({ name: 'sys_update_config', args: { patch: { triggers: value } } })),
    );
    for (const [index, what] of Object.keys(patches).entries()) {
      t.equal(results[index]!.isError, true, `${what}: refused`);
      t.match(results[index]!.content, /owner lock: triggers\.on_\w+: command targets are locked by the owner/s, what);
    }
    t.same(await triggers(), before, 'nothing changed');

    // Agent-scope and lambda targets, the same command in another key order, removing or disabling a command: the
    // agent's.
    const allowed = {
      'agent-scope and lambda targets added': {
        ...before,
        on_chat: { enabled: true, targets: [{ scope: 'agent', loop: 'main' }] },
        on_timer: { enabled: true, targets: [{ scope: 'system', lambda: 'tools/t.ts:run' }] },
      },
      'the same command restated in another key order': {
        ...before,
        on_logs: { targets: [{ command: 'echo owner', scope: 'system' }], enabled: true },
      },
      'a command disabled': { ...before, on_logs: { enabled: false, targets: [ownerCommand] } },
      'every command removed': { on_chat: { enabled: true, targets: [{ scope: 'agent' }] } },
    };
    const passed = await turn(
      h,
      id,
      Object.values(allowed).map((value) => ({ name: 'sys_update_config', args: { patch: { triggers: value } } })),
    );
    for (const [index, what] of Object.keys(allowed).entries())
      t.notOk(passed[index]!.isError, `${what}: ${passed[index]!.content}`);
    t.same(await triggers(), allowed['every command removed']);
    const [again] = await turn(h, id, [{ name: 'sys_update_config', args: { patch: { triggers: before } } }]);
    t.match(
      again!.content,
      /triggers\.on_logs: command targets are locked/,
      'a removed command cannot come back through the agent',
    );

    // Unlocked by the owner: command targets are the agent's to set (still sandboxed, under the ceiling).
    t.equal((await h.d.request('PATCH', '/settings', { agentConfigUnlocks: { [id]: ['triggers'] } })).status, 200);
    t.teardown(() => h.d.request('PATCH', '/settings', { agentConfigUnlocks: null }));
    const [unlocked] = await turn(h, id, [
      { name: 'sys_update_config', args: { patch: { triggers: patches['a new command target'] } } },
    ]);
    t.notOk(unlocked!.isError, unlocked!.content);
    t.same((await triggers()).on_timer, patches['a new command target'].on_timer);
  },
);

t.test('the locks as a function: unlocking triggers opens only command targets, never a locked target', async (t) => {
  const { applyAgentPatch, OWNER_ONLY_FIELDS } = await import('../kernel/runtime/tools/config-locks.js');
  t.notOk(OWNER_ONLY_FIELDS.includes('triggers'), 'triggers are not locked whole');
  const locked = { scope: 'system', command: 'echo audit', locked: true };
  const current = {
    id: 'x',
    model: { provider: 'a', model_id: 'm' },
    tools: [],
    triggers: { on_logs: { enabled: true, targets: [locked] } },
  } as never;
  t.throws(
    () =>
      applyAgentPatch(current, { triggers: { on_logs: { enabled: true, targets: [] } } }, { unlocked: ['triggers'] }),
    /a locked on_logs target cannot be changed or removed/,
  );
  t.throws(
    () =>
      applyAgentPatch(current, { model: { provider: 'b', model_id: 'm' } }, { unlocked: ['triggers', 'providers'] }),
    /model\.provider is locked/,
    "unlocking the agent's own provider list does not move its model",
  );
  t.same(applyAgentPatch(current, { model: { provider: 'b', model_id: 'n' } }, { providers: ['b'] }).model, {
    provider: 'b',
    model_id: 'n',
  });
});
