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

  t.test('a request on a daemon subject must be signed by a daemon of the fleet', async (t) => {
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: nats.url, user: 'fleet', pass: PASSWORD });
    t.teardown(() => nc.close());
    const ask = async (message: unknown) => {
      const reply = await nc.request(
        'agt.fleet.locked.daemon.good',
        new TextEncoder().encode(JSON.stringify(message)),
        {
          timeout: 5_000,
        },
      );
      return JSON.parse(new TextDecoder().decode(reply.data)) as { error?: string; answer?: unknown };
    };
    const request = { request: { method: 'GET', url: '/settings', headers: {} } };
    t.same(await ask(request), { error: 'refused: not signed' }, 'an unsigned request is refused');
    const signed = JSON.stringify({
      body: request,
      daemon: 'other',
      did: (await other.request('GET', '/fleet')).body.did,
      at: Date.now(),
      nonce: 'n1',
    });
    t.same(
      await ask({ signed, sig: Buffer.alloc(64, 7).toString('base64') }),
      { error: 'refused: bad signature' },
      'a forged signature is refused',
    );
    const status = await good.request('GET', '/fleet');
    t.match(status.body.did, /^did:key:z/, 'GET /fleet shows the key that signs this daemon’s requests');

    // With settings fleet.daemonDids, only the daemons listed may forward.
    const path = await createAgentFile(tempDir(t), { name: 'pinned' });
    const loaded = await good.request('POST', '/agents/load', { filePath: path });
    t.equal(loaded.status, 200);
    const pin = (dids: string[]) =>
      good.request('PATCH', '/settings', {
        fleet: {
          servers: [nats.url],
          name: 'locked',
          daemonName: 'good',
          credentials: { user: 'fleet', passwordEnv: 'FLEET_NATS_PASSWORD' },
          daemonDids: dids,
        },
      });
    const otherDid = (await other.request('GET', '/fleet')).body.did as string;
    t.equal((await pin([status.body.did])).status, 200);
    const refused = await other.request('GET', `/agents/${loaded.body.id}/config`);
    t.same([refused.status, refused.body.code], [503, 'unavailable'], 'a daemon not listed is refused');
    t.match(refused.body.error, /not a daemon of the fleet/);
    t.equal((await pin([status.body.did, otherDid])).status, 200);
    t.equal((await other.request('GET', `/agents/${loaded.body.id}/config`)).status, 200, 'a listed one is answered');
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
