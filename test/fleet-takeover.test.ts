/**
 * A daemon's death told by NATS (docs/fleet.md, "Failover"): with `cutOffSeconds`, a daemon that is killed
 * (SIGKILL: its NATS connection closes) has its agent taken over long before the placement TTL, once NATS has
 * answered "no responders" on its subject for longer than its cut-off. A daemon that is frozen (SIGSTOP) keeps
 * its connection: it is never taken over early, and when it wakes it has stopped its agent itself (NATS did not
 * answer it for longer than its cut-off), so the agent waits for the TTL.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';
import { startToolDriver } from './helpers/tool-driver.js';

// Long, so any takeover before it is the early one.
const TTL_SECONDS = 40;
// Above the stalls of a daemon's first agent load on a loaded machine (lazy imports): a shorter cut-off stops
// the agent there before the test can use it.
const CUT_OFF_SECONDS = 4;
/** The cut-off, the margin (1 s), the asks (every 250 ms), and room for a loaded machine. */
const EARLY_BOUND_MS = 20_000;

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const driver = await startToolDriver(t);
  const manifest = fleetManifest({ ttlSeconds: TTL_SECONDS, cutOffSeconds: CUT_OFF_SECONDS });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { providers: [driver.provider], fleet: { servers: [nats.url], name: 'takeover', daemonName } },
      extensions: manifest,
    });
  const [alpha, beta, gamma] = await Promise.all([daemon('alpha'), daemon('beta'), daemon('gamma')]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta), fleetJoined(gamma)]);
  const held = async (d: SpawnedDaemon) =>
    ((await d.request('GET', '/fleet')).body.agents as Array<{ agentId: string }>).map((agent) => agent.agentId);
  const loadOn = async (d: SpawnedDaemon, name: string) => {
    const path = await createAgentFile(tempDir(t), { name, model: driver.model });
    const loaded = await d.request('POST', '/agents/load', { filePath: path });
    if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
    return loaded.body.id as string;
  };

  t.test('a frozen daemon is not taken over early, and stops its agent when it wakes', async (t) => {
    const id = await loadOn(gamma, 'frozen');
    const record = (await beta.request('GET', '/fleet/agents')).body;
    t.match(JSON.stringify(record), id, 'placed');
    gamma.child.kill('SIGSTOP');
    // Well past the cut-off and the margin: NATS still has gamma's connection, so nobody may take its agent.
    await new Promise((resolve) => setTimeout(resolve, (CUT_OFF_SECONDS + 3) * 1000));
    const elsewhere = [...(await held(alpha)), ...(await held(beta))];
    t.notOk(elsewhere.includes(id), 'no other daemon took the agent of a daemon NATS still has');
    gamma.child.kill('SIGCONT');
    let still = true;
    for (const until = Date.now() + 10_000; still && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      still = (await held(gamma)).includes(id);
    }
    t.notOk(still, 'woken past its cut-off, the daemon stopped the agent itself');
  });

  t.test('a killed daemon’s agent is taken over long before the TTL', async (t) => {
    const id = await loadOn(alpha, 'survivor');
    t.equal((await alpha.request('POST', `/agents/${id}/chat?wait=true`, { text: 'before the kill' })).status, 200);
    const killedAt = Date.now();
    await alpha.stop('SIGKILL');
    let holder: SpawnedDaemon | undefined;
    while (!holder && Date.now() - killedAt < EARLY_BOUND_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const d of [beta, gamma]) if ((await held(d)).includes(id)) holder = d;
    }
    t.ok(holder, `adopted within ${EARLY_BOUND_MS} ms (TTL ${TTL_SECONDS} s)`);
    if (!holder) return;
    const chat = await holder.request('POST', `/agents/${id}/chat?wait=true`, { text: 'after the kill' });
    t.equal(chat.status, 200);
    const rto = Date.now() - killedAt;
    t.comment(`RTO: ${rto} ms from SIGKILL to a chat answered (cut-off ${CUT_OFF_SECONDS} s, TTL ${TTL_SECONDS} s)`);
    const history = JSON.stringify((await holder.request('GET', `/agents/${id}/chat`)).body);
    t.match(history, 'before the kill', 'the turn completed before the kill is there');
    t.match(history, 'after the kill');
  });
}
