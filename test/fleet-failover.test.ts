/**
 * Failover on a shared file system: a daemon is killed (SIGKILL) and the other daemon of the fleet adopts
 * its agent once the placement expired, loading it from the same file: the agent answers a chat there with
 * its history. The time from the kill to that answer (the RTO) is printed.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';
import { startToolDriver } from './helpers/tool-driver.js';

const TTL_SECONDS = 6;

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const driver = await startToolDriver(t);
  const manifest = fleetManifest({ ttlSeconds: TTL_SECONDS });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { providers: [driver.provider], fleet: { servers: [nats.url], name: 'failover', daemonName } },
      extensions: manifest,
    });
  const [alpha, beta] = await Promise.all([daemon('alpha'), daemon('beta')]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta)]);

  t.test('a killed daemon’s agent is adopted by another and answers there with its history', async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'survivor', model: driver.model });
    const loaded = await alpha.request('POST', '/agents/load', { filePath: path });
    t.equal(loaded.status, 200);
    const id = loaded.body.id as string;
    t.equal((await alpha.request('POST', `/agents/${id}/chat?wait=true`, { text: 'before the kill' })).status, 200);

    const killedAt = Date.now();
    await alpha.stop('SIGKILL');
    let held: string[] = [];
    while (!held.includes(id) && Date.now() - killedAt < TTL_SECONDS * 1000 + 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      held = (await beta.request('GET', '/fleet')).body.agents.map((agent: { agentId: string }) => agent.agentId);
    }
    t.ok(held.includes(id), 'the other daemon adopted the agent');
    const chat = await beta.request('POST', `/agents/${id}/chat?wait=true`, { text: 'after the kill' });
    t.equal(chat.status, 200);
    const rto = Date.now() - killedAt;
    t.comment(`RTO: ${rto} ms from SIGKILL to a chat answered on the other daemon (TTL ${TTL_SECONDS} s)`);
    t.ok(rto < TTL_SECONDS * 1000 + 5000, `answered ${rto} ms after the kill`);
    const history = JSON.stringify((await beta.request('GET', `/agents/${id}/chat`)).body);
    t.match(history, 'before the kill', 'the turn completed before the kill is there');
    t.match(history, 'after the kill');
  });
}
