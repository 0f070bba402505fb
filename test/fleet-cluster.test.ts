/**
 * A fleet on a 3-node NATS cluster (bucket and stream with 3 replicas): killing one node changes nothing.
 * The node killed is the one that serves the fleet stream reader's consumer (an ordered consumer lives on
 * one node), the hardest case for the stream. The agent's placement is still renewed, the agent keeps
 * running, the other daemon still answers for it, new placements are still taken, and the fleet stream goes
 * on with nothing lost or repeated. Then, the node back, the node serving a daemon's watch of the placement
 * bucket, and the one serving its watch of the agent directory (ordered consumers too), are killed in turn:
 * the daemon still learns of an agent placed, and of an agent recorded, after the kill.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { PASSPHRASE } from './helpers/mesh.js';
import { fleetJoined, fleetManifest, type NatsServer, startNatsCluster } from './helpers/nats.js';
import { openSse } from './helpers/sse-client.js';
import { until } from './helpers/turn-ends.js';

// Long enough for the cluster to elect new stream leaders and the daemons to reconnect while a test batch
// shares the machine (at 10 s a renewal once missed its 7 s window there, at 20 s an agent was lost after the
// third kill); renewals come every 7.5 s.
const TTL_SECONDS = 30;
// Failsafes only: the waits below end on what they wait for, far sooner on an idle machine.
const FAILSAFE_MS = 45_000;
// From the placement or the record stored after the kill: a bucket watch whose node died makes a new consumer
// after 6 s of silence, more rounds while the bucket elects a leader (0 to 15 s here); left to the client
// library's `kv.watch()` it stayed silent 60 to 94 s here.
const WATCH_FAILSAFE_MS = 40_000;

const cluster = await startNatsCluster(t, 3);
if (typeof cluster === 'string') {
  t.comment(`skipped: ${cluster}`);
  t.plan(0, cluster);
} else {
  const manifest = fleetManifest({ ttlSeconds: TTL_SECONDS, replicas: 3 });
  // An owner on each daemon, so agents made there have keys and DIDs (the agent directory holds them).
  const daemon = async (daemonName: string) => {
    const d = await runDaemon(t, {
      settings: { fleet: { servers: cluster.urls, name: 'cluster', daemonName } },
      extensions: manifest,
      env: { AGT_OWNER_PASSPHRASE: PASSPHRASE },
    });
    const created = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
    if (created.status !== 201) throw new Error(`identity: ${created.status} ${JSON.stringify(created.body)}`);
    return d;
  };
  const [alpha, beta] = await Promise.all([daemon('alpha'), daemon('beta')]);
  await Promise.all([fleetJoined(alpha, 60_000), fleetJoined(beta, 60_000)]);
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const { Kvm } = await import('@nats-io/kv');
  const nc = await connect({ servers: cluster.urls, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  /**
   * The node serving the consumer of `stream` whose name starts with `prefix`: its latest (a daemon's reader
   * names them `<prefix><random>_<serial>_<n>`; one left on a node killed and started again lingers until its
   * inactivity threshold).
   */
  const servingNode = async (stream: string, prefix = '') => {
    const found = [];
    for await (const info of jsm.consumers.list(stream))
      if (info.name.startsWith(prefix) && info.cluster?.leader) found.push(info);
    const serials = (name: string) => name.split('_').slice(-2).map(Number) as [number, number];
    const [latest] = found.sort((a, b) => {
      const [x, y] = [serials(a.name), serials(b.name)];
      return y[0] - x[0] || y[1] - x[1];
    });
    if (!latest) return undefined;
    return cluster.nodes[Number(latest.cluster!.leader!.replace(/^n/, '')) - 1]!;
  };
  /** Polls `check` (async) until it returns something; rejects after `ms`. */
  const eventually = async <T>(
    check: () => Promise<T | undefined>,
    what: string,
    ms = FAILSAFE_MS,
    every = 100,
  ): Promise<T> => {
    for (const deadline = Date.now() + ms; ; ) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`failsafe: ${what} not within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  };
  let down: NatsServer | undefined;
  /** Starts the node killed last and resolves once every stream has all its replicas current again. */
  const whole = async () => {
    if (!down) return;
    await down.start();
    down = undefined;
    await eventually(async () => {
      for await (const info of jsm.streams.list()) {
        const replicas = info.cluster?.replicas ?? [];
        if (!info.cluster?.leader || replicas.length !== 2 || replicas.some((peer) => !peer.current || peer.offline))
          return undefined;
      }
      return true;
    }, 'every stream with its three replicas current');
  };
  const kill = async (node: NatsServer) => {
    await node.stop();
    down = node;
  };
  const dir = tempDir(t);
  const create = async (d: SpawnedDaemon, name: string) => {
    const created = await d.request('POST', '/agents/create', { name, directory: dir });
    if (created.status === 201)
      return {
        id: created.body.agentId as string,
        did: created.body.did as string,
        filePath: created.body.filePath as string,
      };
    // Right after a kill the placement bucket may have no leader yet: the file is made, its load tried again.
    if (created.status !== 422 || created.body.code !== 'load_failed')
      throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.agentId as string;
    const filePath = created.body.filePath as string;
    await eventually(async () => {
      const loaded = await d.request('POST', '/agents/load', { filePath });
      return loaded.status === 200 ? true : undefined;
    }, `agent ${name} loaded`);
    return { id, did: (await d.request('GET', `/agents/${id}/identity`)).body.did as string, filePath };
  };

  t.test('the node serving the fleet stream killed: agents, forwarding, placements and the stream go on', async (t) => {
    const loaded = await alpha.request('POST', '/agents/load', {
      filePath: await createAgentFile(dir, { name: 'steady' }),
    });
    t.equal(loaded.status, 200);
    const log = await eventLog(t, alpha);
    const stream = await openSse(`${beta.url}/events?scope=fleet&since=0`, { authorization: `Bearer ${beta.token}` });
    t.teardown(() => stream.close());
    t.equal(stream.status, 200);
    const frames = () =>
      stream.messages
        .filter((message) => message.id !== undefined && message.data !== undefined)
        .map((message) => JSON.parse(message.data!) as { cursor: number; event: { payload: { name?: string } } });
    await until(() => frames().some((frame) => frame.event.payload.name === 'steady'), 'the load on the stream');

    // One consumer reads the stream: the open fleet stream's.
    const holder = await eventually(() => servingNode('agt_fleet_cluster_events'), 'the fleet stream’s consumer');
    const placements = await new Kvm(nc).open('agt_fleet_cluster_placements');
    const revision = async () => (await placements.get(loaded.body.id).catch(() => null))?.revision ?? 0;
    const before = await revision();
    t.ok(before > 0, 'the agent’s placement is in the bucket');

    await kill(holder);
    // Two renewals stored after the kill: the holder's heartbeat goes on with the cluster's new leaders.
    const renewals = new Set<number>();
    const deadline = Date.now() + FAILSAFE_MS;
    while (renewals.size < 2) {
      const seen = await revision();
      if (seen > before) renewals.add(seen);
      if (Date.now() > deadline) throw new Error(`failsafe: ${renewals.size} renewals within ${FAILSAFE_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    t.pass('the placement is renewed after the kill');
    t.equal((await alpha.request('GET', `/agents/${loaded.body.id}/status`)).status, 200, 'the agent still runs');
    t.notOk(
      log.events.some((event) => event.event_type === 'agent.unloaded'),
      'and was never unloaded',
    );
    const forwarded = await beta.request('GET', `/agents/${loaded.body.id}/config`);
    t.equal(forwarded.status, 200, 'the other daemon still answers for it');

    const later = await beta.request('POST', '/agents/load', {
      filePath: await createAgentFile(dir, { name: 'later' }),
    });
    t.equal(later.status, 200, 'a new placement is taken');
    await until(
      () => frames().some((frame) => frame.event.payload.name === 'later'),
      'the new load on the fleet stream',
      FAILSAFE_MS,
    );
    const cursors = frames().map((frame) => frame.cursor);
    t.same(
      cursors,
      cursors.map((_, index) => index + 1),
      'the stream goes on: every sequence from the first, none lost, none twice',
    );
    const again = await alpha.request('POST', '/agents/load', { filePath: later.body.filePath });
    t.same([again.status, again.body.code, again.body.daemon], [409, 'agent_held_elsewhere', 'beta']);
  });

  t.test(
    'the node serving a daemon’s bucket watch killed: it still learns of agents placed and recorded after',
    async (t) => {
      await whole();
      // Beta's agent directory is read (and watched) once an agent of beta's is recorded.
      const sender = await create(beta, 'sender');
      const placementsNode = await eventually(
        () => servingNode('KV_agt_fleet_cluster_placements', 'beta_placements_'),
        'the watch of beta’s placements',
      );
      const agentsNode = await eventually(
        () => servingNode('KV_agt_fleet_cluster_agents', 'beta_agents_'),
        'the watch of beta’s agent directory',
      );

      await kill(placementsNode);
      const placed = await create(alpha, 'placed-after');
      let since = Date.now();
      const byName = await eventually(
        async () => {
          const res = await beta.request('GET', '/agents/placed-after/config');
          return res.status === 200 ? res : undefined;
        },
        'the agent placed after the kill, answered by name on the other daemon',
        WATCH_FAILSAFE_MS,
      );
      t.comment(`beta forwarded by name ${Date.now() - since} ms after the placement`);
      t.equal(byName.body.config.id, placed.id, 'the other daemon forwards by name to an agent placed after the kill');
      t.ok(
        (await beta.request('GET', '/agents')).body.some(
          (agent: { id: string; daemon?: string }) => agent.id === placed.id && agent.daemon === 'alpha',
        ),
        'and lists it as alpha’s',
      );

      if (agentsNode !== placementsNode) {
        await whole();
        await kill(agentsNode);
      }
      t.comment(`beta's watches: ${agentsNode === placementsNode ? 'on one node' : 'on two nodes, killed in turn'}`);
      const receiver = await create(alpha, 'recorded-after');
      // Alpha records it once the agents bucket has a leader again; from then on beta can learn of it.
      const agents = await new Kvm(nc).open('agt_fleet_cluster_agents');
      await eventually(
        async () => ((await agents.get(receiver.id).catch(() => null))?.operation === 'PUT' ? true : undefined),
        'the receiver’s record in the agent directory',
      );
      since = Date.now();
      // Until beta's directory holds the receiver, a message to its DID goes to the mesh, which fails it; once
      // it does, the fleet stores the message (delivered) and carries it to alpha.
      const text = await eventually(
        async () => {
          const text = `after the kill ${Date.now()}`;
          const sent = await beta.request('POST', `/agents/${sender.id}/outbox`, {
            text,
            channel: 'mesh',
            recipient: receiver.did,
          });
          if (sent.status === 404) {
            // Kills and restarts on a loaded machine may cost the sender its placement (renewals missed for 70%
            // of the TTL unload it, see docs/fleet.md "Guarantees"): loaded again, not what this test is about.
            t.comment('the sender lost its placement meanwhile: loaded again');
            const loaded = await beta.request('POST', '/agents/load', { filePath: sender.filePath });
            if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
            return undefined;
          }
          if (sent.status !== 202) throw new Error(`outbox: ${sent.status} ${JSON.stringify(sent.body)}`);
          const status = await eventually(async () => {
            const rows = (await beta.request('GET', `/agents/${sender.id}/outbox`)).body.messages as Array<{
              id: number;
              status: string;
            }>;
            const row = rows.find((candidate) => candidate.id === sent.body.messageId);
            return row && (row.status === 'delivered' || row.status === 'failed') ? row.status : undefined;
          }, `outbox row ${sent.body.messageId} delivered or failed`);
          return status === 'delivered' ? text : undefined;
        },
        'a message to the agent recorded after the kill taken by the fleet',
        WATCH_FAILSAFE_MS,
        500,
      );
      t.comment(`beta's directory knew the agent ${Date.now() - since} ms after its record was stored`);
      const row = await eventually(async () => {
        const rows = (await alpha.request('GET', `/agents/${receiver.id}/inbox`)).body.messages as Array<{
          text: string;
          data: { mesh?: { via?: string } };
        }>;
        return rows.find((candidate) => candidate.text === text);
      }, 'the message in the receiver’s inbox');
      t.equal(row.data.mesh?.via, 'fleet', 'a message to an agent recorded after the kill goes over the fleet');
    },
  );
}
