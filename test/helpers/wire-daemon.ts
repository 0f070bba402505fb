/**
 * The runtime harness's `wire: true` on the built daemon: `runDaemon` (the shipped extensions, the
 * providers' retries off so a scripted HTTP error is one model call), the runtime fixtures' WireModel
 * played by the fake OpenAI server as the provider `local`, the daemon's events read from `GET /events`,
 * and agents written with the real AgentFile and loaded over HTTP.
 */
import type { AgentConfig } from '../../contracts/agent-config.js';
import type { EventType, UmbilicalEvent } from '../../contracts/events.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeScript } from '../fakes/openai.js';
import { WireModel } from '../fixtures/runtime/wire-model.js';
import { loadNewAgent } from './agent-file.js';
import { runDaemon, shippedManifest, tempDir, type BootOptions, type SpawnedDaemon } from './daemon.js';
import { eventLog, type EventLog } from './events.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface WireDaemon {
  d: SpawnedDaemon;
  model: WireModel;
  fake: FakeOpenAI;
  log: EventLog;
  /** A temp folder for the agents' files. */
  dir: string;
  /** Writes and loads an agent (`files` stored in it); resolves to its id. */
  agent(config?: Partial<AgentConfig>, files?: Record<string, string>): Promise<string>;
  /** The first event (past or future) matching; rejects after `ms` (default 15 s). */
  waitFor(match: (event: UmbilicalEvent) => boolean, what?: string, ms?: number): Promise<UmbilicalEvent>;
  /** Events of one type (optionally of one agent) seen so far. */
  of<T extends EventType>(type: T, agentId?: string): Array<UmbilicalEvent<T>>;
  /** Waits until `turnId` has ended (turn.completed as turn_id or absorbed, agent.error, chat.discarded). */
  ended(turnId: string): Promise<UmbilicalEvent>;
}

export const WIRE_PROVIDER_ID = 'local';

/**
 * Whether `event` ends `turnId`: its turn.completed or agent.error (as the turn or an absorbed one), or its
 * chat.discarded.
 */
export function endsTurn(event: UmbilicalEvent, turnId: string): boolean {
  const p = event.payload as Record<string, unknown>;
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error') {
    return p.turn_id === turnId || (Array.isArray(p.absorbed_turn_ids) && p.absorbed_turn_ids.includes(turnId));
  }
  if (event.event_type === 'chat.discarded') return Array.isArray(p.turn_ids) && p.turn_ids.includes(turnId);
  return false;
}

/**
 * `script`: what the fake server plays instead of the WireModel's steps (a test's own model).
 * `providers`: more app providers next to `local` (e.g. a second fake server the owner configured).
 */
export async function wireDaemon(
  t: Teardown,
  options: BootOptions & { script?: FakeScript; providers?: Array<Record<string, unknown>> } = {},
): Promise<WireDaemon> {
  const { script, providers = [], ...boot } = options;
  const model = new WireModel();
  const fake = await startFakeOpenAI(t, script ?? model.script);
  const d = await runDaemon(t, {
    extensions: shippedManifest({ providers: { maxRetries: 0 } }),
    ...boot,
    settings: {
      ...boot.settings,
      providers: [
        { id: WIRE_PROVIDER_ID, type: 'openai-compatible', name: 'Fake OpenAI', baseUrl: fake.baseUrl },
        ...providers,
      ],
    },
  });
  if (!d.url) throw new Error(`the daemon did not start: ${d.stderr()}`);
  const log = await eventLog(t, d);
  const dir = tempDir(t, 'agt-wire-agents-');
  const waitFor: WireDaemon['waitFor'] = (match, what = 'event', ms) =>
    log.waitFor(match, what, ms === undefined ? {} : { ms });
  return {
    d,
    model,
    fake,
    log,
    dir,
    agent: (config = {}, files = {}) => loadNewAgent(d, dir, config, files),
    waitFor,
    of: (type, agentId) =>
      log.events.filter((e) => e.event_type === type && (agentId === undefined || e.agent_id === agentId)) as never,
    ended: (turnId) => waitFor((e) => endsTurn(e, turnId), `the end of turn ${turnId}`),
  };
}

/** Resolves once the fake server has received `count` model calls in all; rejects after `ms` (default 15 s). */
export async function modelCalls(h: WireDaemon, count: number, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (h.fake.chatRequests().length < count) {
    if (Date.now() > deadline)
      throw new Error(`failsafe: ${h.fake.chatRequests().length} of ${count} model calls within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
