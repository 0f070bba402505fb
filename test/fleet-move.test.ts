/**
 * Planned moves without a shared file system (docs/fleet.md, "Planned moves"): three daemons with their own data
 * directories, the fleet replicating agent files. Agents created on alpha move under a chat load sent through
 * gamma (one waited chat after another per agent, so a turn is running when its agent stops): `POST /fleet/move`
 * to beta, then `POST /fleet/drain` of alpha to beta and gamma. Each agent travels as its final copy through the
 * object store: it answers on its target, its file lives in the target's data directory, the files alpha ran
 * are deleted without consequence, every chat a daemon accepted ends exactly once on the fleet stream, and every
 * completed turn (its chat and its answer, each answer unique) is in its agent's history, also a turn that
 * ended in the unload's grace, which only the final copy holds; chats still queued at a move run on the target
 * (none is discarded). A target that cannot restore the copy leaves
 * the agent loaded back where it was (`restored`); the steps refuse what is not theirs.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { turnIdsEndedBy } from '@agt/contracts';
import { reply } from './fakes/script.js';
import { createAgentFile } from './helpers/agent-file.js';
import { type DaemonClient, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';
import { within } from './helpers/step.js';
import { startToolDriver } from './helpers/tool-driver.js';

const AGENTS = 3;

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  // Each model call takes a while, so a turn is running when its agent stops for the move; each answer is its
  // own, so the history shows which turns it holds.
  let answers = 0;
  const driver = await startToolDriver(t, () => reply.text(`answer <${++answers}>`, { delayMs: 80 }));
  const manifest = fleetManifest({ ttlSeconds: 6, replicate: true, requestTimeoutMs: 30_000 });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { providers: [driver.provider], fleet: { servers: [nats.url], name: 'moves', daemonName } },
      extensions: manifest,
    });
  const [alpha, beta, gamma] = await Promise.all([daemon('alpha'), daemon('beta'), daemon('gamma')]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta), fleetJoined(gamma)]);
  const fleet = await eventLog(t, gamma, '?scope=fleet');

  // Each agent in a folder of its own on alpha's side: deleted once the agent has moved away.
  const ids: string[] = [];
  const files = new Map<string, string>();
  for (let i = 0; i < AGENTS; i++) {
    const path = await createAgentFile(tempDir(t), { name: `mover-${i}`, model: driver.model });
    const loaded = await alpha.request('POST', '/agents/load', { filePath: path });
    if (loaded.status !== 200) throw new Error(`load: ${JSON.stringify(loaded.body)}`);
    ids.push(loaded.body.id as string);
    files.set(loaded.body.id as string, path);
  }

  /** Chats accepted (202 or 200) by turn id, with the agent and text. */
  const texts = new Map<string, { agentId: string; text: string }>();
  let loading = true;
  t.teardown(() => {
    loading = false;
  });
  // Chat load through gamma, which forwards each chat to whichever daemon runs the agent then: one chat after
  // another per agent, each waiting for its turn, so a turn runs (and ends in the unload's grace) at a move.
  const load = ids.map(async (id, i) => {
    for (let n = 0; loading; n++) {
      const text = `load ${i}.${n}`;
      const answer = await gamma.request('POST', `/agents/${id}/chat?wait=true`, { text }).catch(() => undefined);
      if (answer?.status === 200 || answer?.status === 202)
        texts.set(answer.body.turnId as string, { agentId: id, text });
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  const turnsOf = async (id: string, from: number) =>
    fleet.waitFor((event) => event.event_type === 'turn.completed' && event.agent_id === id, `a turn of ${id}`, {
      from,
    });

  /** A chat answered (`?wait=true`) through `via`; the answer's status. */
  const chat = async (via: DaemonClient, id: string, text: string) => {
    const answer = await within(
      30_000,
      `chat "${text}"`,
      via.request('POST', `/agents/${id}/chat?wait=true`, { text }),
    );
    if (answer.status === 200) texts.set(answer.body.turnId as string, { agentId: id, text });
    return answer.status;
  };

  const runsOn = async (d: DaemonClient) =>
    ((await d.request('GET', '/fleet')).body.agents as Array<{ agentId: string }>).map((agent) => agent.agentId).sort();

  t.test('a target that cannot restore the copy leaves the agent where it was', async (t) => {
    // Where gamma would place the agent's file is a folder: its restore fails after alpha handed the agent off.
    const blocked = join(gamma.dataDir, 'fleet-agents', `${ids[0]}.agt`);
    mkdirSync(blocked, { recursive: true });
    writeFileSync(join(blocked, 'in the way'), '');
    await turnsOf(ids[0]!, fleet.events.length);
    const failed = await gamma.request('POST', '/fleet/move', { agent: ids[0], daemon: 'gamma' });
    rmSync(blocked, { recursive: true, force: true });
    t.not(failed.status, 200, JSON.stringify(failed.body));
    t.match(failed.body, { step: 'loading on gamma', restored: true }, 'loaded back on alpha, the error says so');
    t.same(await runsOn(alpha), [...ids].sort(), 'alpha runs it again');
    t.equal(await chat(gamma, ids[0]!, 'after the failed move'), 200, 'and it answers');
  });

  t.test('POST /fleet/move under a chat load: the agent answers on the target, from its data directory', async (t) => {
    await turnsOf(ids[0]!, fleet.events.length);
    // Chats accepted just before the move, some still queued when the agent stops: they run on the target.
    for (let n = 0; n < 4; n++) {
      const queued = await alpha.request('POST', `/agents/${ids[0]}/chat`, { text: `queued ${n}` });
      t.equal(queued.status, 202);
      texts.set(queued.body.turnId as string, { agentId: ids[0]!, text: `queued ${n}` });
    }
    const moved = await within(
      30_000,
      'the move',
      gamma.request('POST', '/fleet/move', { agent: ids[0], daemon: 'beta' }),
    );
    t.equal(moved.status, 200, JSON.stringify(moved.body));
    t.match(moved.body, { agentId: ids[0], from: 'alpha', to: 'beta', moved: true, via: 'replica' });
    t.ok(String(moved.body.filePath).startsWith(beta.dataDir), `its file is in beta's data directory`);
    rmSync(dirname(files.get(ids[0]!)!), { recursive: true, force: true });
    t.same(await runsOn(beta), [ids[0]]);
    const view = await beta.request('GET', `/agents/${ids[0]}`);
    t.equal(view.body.filePath, moved.body.filePath);
    t.equal(await chat(gamma, ids[0]!, 'after the move'), 200, 'it answers on beta, its files on alpha deleted');
  });

  t.test('the steps refuse what is not theirs', async (t) => {
    const notHere = await gamma.request('POST', '/fleet/handoff', { agent: ids[0] });
    t.same([notHere.status, notHere.body.code], [404, 'not_found'], 'a handoff where the agent does not run');
    const other = await gamma.request('POST', '/fleet/takeover', { agentId: ids[0], sha256: '0'.repeat(64) });
    t.same([other.status, other.body.code], [409, 'replica_changed'], 'a takeover of another copy than the one named');
    const bad = await gamma.request('POST', '/fleet/takeover', { agentId: ids[0], sha256: 'not a digest' });
    t.equal(bad.status, 400, 'a sha256 that is not one');
    t.same(await runsOn(gamma), [], 'gamma runs nothing');
  });

  t.test('POST /fleet/drain moves every agent of alpha the same way', async (t) => {
    await turnsOf(ids[2]!, fleet.events.length);
    const drained = await within(
      60_000,
      'the drain',
      gamma.request('POST', '/fleet/drain', { daemon: 'alpha', to: ['beta', 'gamma'] }),
    );
    t.equal(drained.status, 200, JSON.stringify(drained.body));
    t.same(drained.body.failed, []);
    t.same(
      (drained.body.moved as Array<{ agentId: string }>).map((entry) => entry.agentId).sort(),
      ids.slice(1).sort(),
    );
    for (const id of ids.slice(1)) rmSync(dirname(files.get(id)!), { recursive: true, force: true });
    t.same(await runsOn(alpha), [], 'alpha runs nothing');
    const held = [...(await runsOn(beta)), ...(await runsOn(gamma))].sort();
    t.same(held, [...ids].sort(), 'beta and gamma run every agent');
    for (const d of [beta, gamma])
      for (const id of await runsOn(d)) {
        const view = await d.request('GET', `/agents/${id}`);
        t.ok(String(view.body.filePath).startsWith(d.dataDir), `${id} runs from ${d.dataDir}`);
      }
    for (const id of ids) t.equal(await chat(alpha, id, `after the drain ${id}`), 200, 'it answers');
  });

  t.test('nothing lost: every accepted chat ends once on the fleet stream, every completed turn is kept', async (t) => {
    loading = false;
    await within(20_000, 'the chat load ending', Promise.all(load));
    const ends = () => {
      const count = new Map<string, number>();
      for (const event of fleet.events)
        for (const turnId of turnIdsEndedBy(event)) count.set(turnId, (count.get(turnId) ?? 0) + 1);
      return count;
    };
    const until = Date.now() + 20_000;
    while ([...texts.keys()].some((turnId) => !ends().has(turnId)) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const count = ends();
    t.same(
      [...texts.keys()]
        .filter((turnId) => count.get(turnId) !== 1)
        .map((turnId) => `${texts.get(turnId)!.text}: ended ${count.get(turnId) ?? 0} times`),
      [],
      `${texts.size} accepted chats, each ended exactly once on the fleet stream`,
    );
    const completed = new Set(
      fleet.events.filter((event) => event.event_type === 'turn.completed').flatMap(turnIdsEndedBy),
    );
    const discarded = [...texts.keys()].filter((turnId) => !completed.has(turnId)).length;
    t.comment(
      `${texts.size} chats accepted: ${completed.size} completed, ${discarded} ended otherwise (discarded or cut short)`,
    );
    t.same(
      fleet.events.filter((event) => event.event_type === 'chat.discarded').map((event) => event.payload),
      [],
      'no accepted chat discarded: what was queued at a move ran on the target',
    );
    const missing: string[] = [];
    for (const id of ids) {
      const history = JSON.stringify((await gamma.request('GET', `/agents/${id}/chat?limit=1000`)).body);
      for (const [turnId, { agentId, text }] of texts)
        if (agentId === id && completed.has(turnId) && !history.includes(text)) missing.push(text);
      for (const event of fleet.events) {
        const answer = (event.payload as { text?: string | null }).text;
        if (event.event_type === 'turn.completed' && event.agent_id === id && answer && !history.includes(answer))
          missing.push(answer);
      }
    }
    t.same(missing, [], 'every completed turn, and its answer, is in its agent history');
  });
}
