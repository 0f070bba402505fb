/**
 * One runtime per agent across a fleet: two built daemons share one nats-server (Debian's, started here)
 * and one agent file. Exactly one of two loads that race wins the placement; the loser is told which
 * daemon runs it; an unload gives it back; a daemon that loses NATS stops the agent within the TTL.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';

const TTL_SECONDS = 6;

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const manifest = fleetManifest({ ttlSeconds: TTL_SECONDS, requestTimeoutMs: 10_000 });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { fleet: { servers: [nats.url], name: 'placement', daemonName } },
      extensions: manifest,
    });
  const [a, b] = await Promise.all([daemon('alpha'), daemon('beta')]);
  await Promise.all([fleetJoined(a), fleetJoined(b)]);
  const load = (d: SpawnedDaemon, filePath: string) => d.request('POST', '/agents/load', { filePath });

  t.test('GET /fleet names the daemon and its fleet', async (t) => {
    const status = await a.request('GET', '/fleet');
    t.equal(status.status, 200);
    t.match(status.body, {
      configured: true,
      fleet: 'placement',
      daemon: 'alpha',
      ttlSeconds: TTL_SECONDS,
      agents: [],
    });
  });

  t.test('two daemons race for one agent: one runs it, the other is told which', async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'raced' });
    const answers = await Promise.all([load(a, path), load(b, path)]);
    const statuses = answers.map((answer) => answer.status).sort();
    t.same(statuses, [200, 409], 'exactly one load wins');
    const winner = answers[0]!.status === 200 ? 'alpha' : 'beta';
    const loser = answers.find((answer) => answer.status === 409)!;
    t.equal(loser.body.code, 'agent_held_elsewhere', 'refused by the placement, before the file lease');
    t.equal(loser.body.daemon, winner, 'names the daemon that runs it');
    const holder = winner === 'alpha' ? a : b;
    const other = winner === 'alpha' ? b : a;
    const placed = await other.request('GET', '/fleet/agents');
    t.same(
      placed.body.agents.map((agent: { name: string; daemon: string }) => [agent.name, agent.daemon]),
      [['raced', winner]],
      'every daemon sees the placement',
    );
    const agentId = answers.find((answer) => answer.status === 200)!.body.id as string;
    t.equal((await holder.request('POST', `/agents/${agentId}/unload`)).status, 200);
    const taken = await load(other, path);
    t.equal(taken.status, 200, 'an unload gives the placement back: the other daemon runs it now');
    t.same(
      (await other.request('GET', '/fleet')).body.agents.map((agent: { name: string }) => agent.name),
      ['raced'],
    );
    t.equal((await other.request('POST', `/agents/${agentId}/unload`)).status, 200);
  });

  t.test('a daemon that loses NATS stops its agents within the TTL; another runs them after', async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'cut-off' });
    const loaded = await load(a, path);
    t.equal(loaded.status, 200);
    const log = await eventLog(t, a);
    const cut = Date.now();
    await nats.stop();
    const unloaded = await log.waitFor(
      (event) => event.event_type === 'agent.unloaded' && event.agent_id === loaded.body.id,
      'the agent unloaded after NATS went away',
      { ms: TTL_SECONDS * 1000 + 2000 },
    );
    const stoppedAfter = Date.now() - cut;
    t.equal((unloaded.payload as { reason: string }).reason, 'placement_lost');
    t.ok(stoppedAfter < TTL_SECONDS * 1000, `stopped ${stoppedAfter} ms after NATS went away (TTL ${TTL_SECONDS} s)`);
    t.equal((await a.request('GET', `/agents/${loaded.body.id}/status`)).status, 404, 'no longer runs here');

    await nats.start();
    // The record the cut-off daemon could not delete expires a TTL after its last renewal; until then the
    // other daemon is refused, naming the earlier holder (or answers 503 while its client reconnects).
    let answer = await load(b, path);
    const deadline = Date.now() + TTL_SECONDS * 1000 + 5000;
    while (answer.status !== 200 && Date.now() < deadline) {
      if (answer.status === 503) t.equal(answer.body.code, 'unavailable', 'NATS not reachable yet');
      else t.same([answer.status, answer.body.code, answer.body.daemon], [409, 'agent_held_elsewhere', 'alpha']);
      await new Promise((resolve) => setTimeout(resolve, 250));
      answer = await load(b, path);
    }
    t.equal(answer.status, 200, 'the other daemon runs it once the placement expired');
  });
}
