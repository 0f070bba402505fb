/**
 * The activity log: one info line per turn (agent, loop, turn id, model, tokens,
 * duration, end reason), per tool call and per owner wait, read off a real event bus; and the daemon
 * logs request lines only at debug.
 */
import t from 'tap';
import { KernelBus } from '../kernel/events/bus.js';
import { logActivity } from '../kernel/runtime/activity-log.js';
import type { Logger } from '../contracts/logger.js';

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, any>; msg: string }> = [];
  const at = (level: string) => (fields: unknown, msg?: string) =>
    void lines.push({ level, fields: fields as Record<string, any>, msg: msg ?? '' });
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, lines };
}

t.test('one line per turn, tool call and owner wait', async (t) => {
  const { logger, lines } = recordingLogger();
  let now = 1_000;
  const bus = new KernelBus(logger, 100, () => now);
  const stop = logActivity(bus, logger, (id) => (id === 'agt-1' ? 'alpha' : undefined));
  const turn = { agentId: 'agt-1', turnId: 'turn-1', loop: 'side' };
  bus.emit('turn.started', { ...turn, payload: { turn_id: 'turn-1', trigger: 'chat' } });
  now += 40;
  bus.emit('llm.completed', {
    ...turn,
    payload: {
      provider: 'local',
      model: 'm1',
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
      cost: null,
      duration_ms: 30,
      stop_reason: 'tool_use',
    },
  });
  bus.emit('hil.requested', {
    ...turn,
    payload: { kind: 'approval', taskId: 'task-1', tool: 'fs_write', args: { content: 'secret text' } },
  });
  bus.emit('tool.completed', { ...turn, payload: { tool: 'fs_write', call_id: 'c1', ok: true, duration_ms: 7 } });
  bus.emit('llm.completed', {
    ...turn,
    payload: {
      provider: 'local',
      model: 'm1',
      usage: { input: 20, output: 8, cacheRead: 0, cacheWrite: 0 },
      cost: null,
      duration_ms: 30,
      stop_reason: 'end_turn',
    },
  });
  now += 60;
  bus.emit('turn.completed', {
    ...turn,
    payload: {
      turn_id: 'turn-1',
      absorbed_turn_ids: [],
      text: 'hi',
      llm_calls: 2,
      tool_calls: 1,
      stop_reason: 'end_turn',
    },
  });

  t.same(
    lines.map((line) => `${line.level} ${line.msg}`),
    ['info waiting for approval', 'info tool call', 'info turn completed'],
  );
  t.match(lines[0]!.fields, { agent: 'alpha', loop: 'side', turnId: 'turn-1', taskId: 'task-1', tool: 'fs_write' });
  t.notOk(JSON.stringify(lines).includes('secret text'), 'tool arguments are not logged');
  t.match(lines[1]!.fields, { agent: 'alpha', tool: 'fs_write', ok: true, durationMs: 7 });
  t.match(lines[2]!.fields, {
    agent: 'alpha',
    agentId: 'agt-1',
    loop: 'side',
    turnId: 'turn-1',
    model: 'local/m1',
    tokens: { input: 30, output: 13 },
    durationMs: 100,
    end: 'end_turn',
    trigger: 'chat',
  });

  bus.emit('turn.started', { agentId: 'agt-2', turnId: 'turn-2', payload: { turn_id: 'turn-2', trigger: 'timer' } });
  bus.emit('agent.error', {
    agentId: 'agt-2',
    turnId: 'turn-2',
    payload: { code: 'upstream_error', message: 'vendor down', turn_id: 'turn-2' },
  });
  t.match(lines.at(-1), {
    level: 'warn',
    msg: 'turn failed: vendor down',
    fields: { agent: 'agt-2', loop: 'main', turnId: 'turn-2', end: 'error', code: 'upstream_error' },
  });

  stop();
  bus.emit('turn.completed', {
    ...turn,
    payload: {
      turn_id: 'turn-1',
      absorbed_turn_ids: [],
      text: null,
      llm_calls: 0,
      tool_calls: 0,
      stop_reason: 'end_turn',
    },
  });
  t.equal(lines.length, 4, 'nothing after unsubscribe');
});
