/**
 * The fleet's NATS credentials: a daemon with the right password joins and runs agents; one with a wrong
 * password is refused by NATS, says so in `GET /fleet`, and runs no agent (503) rather than run it outside
 * the fleet. A daemon that shuts down gives its agents' placements back at once.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';

const PASSWORD = 'fleet-secret-4c1f';
const nats = await startNats(t, { user: { name: 'fleet', password: PASSWORD } });
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const manifest = fleetManifest({ ttlSeconds: 10 });
  const daemon = (daemonName: string, password: string) =>
    runDaemon(t, {
      settings: {
        fleet: {
          servers: [nats.url],
          name: 'locked',
          daemonName,
          credentials: { user: 'fleet', passwordEnv: 'FLEET_NATS_PASSWORD' },
        },
      },
      env: { FLEET_NATS_PASSWORD: password },
      extensions: manifest,
    });
  const [good, other, wrong] = await Promise.all([
    daemon('good', PASSWORD),
    daemon('other', PASSWORD),
    daemon('wrong', 'not-the-password'),
  ]);
  await Promise.all([fleetJoined(good), fleetJoined(other)]);

  t.test('wrong NATS credentials are refused: no agent runs outside the fleet', async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'guarded' });
    const refused = await wrong.request('POST', '/agents/load', { filePath: path });
    t.same([refused.status, refused.body.code], [503, 'unavailable'], 'the load is refused, not run alone');
    const status = await wrong.request('GET', '/fleet');
    t.equal(status.body.connected, false);
    t.match(String(status.body.problem), /auth/i, 'GET /fleet says NATS refused the credentials');
    t.notMatch(JSON.stringify(status.body), /not-the-password/, 'and never shows the password');
    t.equal((await good.request('POST', '/agents/load', { filePath: path })).status, 200, 'the right ones work');
  });

  t.test('a daemon that shuts down gives its placements back at once', async (t) => {
    const path = await createAgentFile(tempDir(t), { name: 'handed-over' });
    t.equal((await good.request('POST', '/agents/load', { filePath: path })).status, 200);
    const held = await other.request('POST', '/agents/load', { filePath: path });
    t.same([held.status, held.body.daemon], [409, 'good']);
    t.equal(await good.stop(), 0, 'a clean shutdown');
    const taken = await other.request('POST', '/agents/load', { filePath: path });
    t.equal(taken.status, 200, 'the other daemon runs it at once, without waiting for the TTL');
  });
}
