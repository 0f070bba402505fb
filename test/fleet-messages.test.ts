/**
 * Messages between the fleet's agents travel over JetStream: from an agent on one daemon to an agent on
 * another they arrive once; sent while the receiver's daemon is stopped they wait in the stream and arrive
 * when the agent is loaded again, there or on another daemon; a message published again under the same id
 * (within JetStream's duplicate window, or past it under another NATS message id) is not delivered twice.
 */
import t from 'tap';
import { runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { PASSPHRASE, signedEnvelope, testKey } from './helpers/mesh.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';

interface InboxRow {
  id: number;
  source: string;
  sender: string | null;
  text: string;
  data: { mesh?: { id?: string; via?: string } };
}

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const manifest = fleetManifest({ ttlSeconds: 6 });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { fleet: { servers: [nats.url], name: 'talk', daemonName } },
      extensions: manifest,
      env: { AGT_OWNER_PASSPHRASE: PASSPHRASE },
    });
  // An owner on each daemon, so agents made there have their keys (the mesh and the fleet sign with them).
  const withOwner = async (d: SpawnedDaemon) => {
    const created = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
    if (created.status !== 201) throw new Error(`identity: ${created.status} ${JSON.stringify(created.body)}`);
    await fleetJoined(d);
    return d;
  };
  const [alpha, first] = await Promise.all([daemon('alpha').then(withOwner), daemon('beta').then(withOwner)]);
  let beta = first;
  const dir = tempDir(t);

  const create = async (d: SpawnedDaemon, name: string, patch: Record<string, unknown> = {}) => {
    const created = await d.request('POST', '/agents/create', { name, directory: dir });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    if (Object.keys(patch).length > 0) {
      const patched = await d.request('PATCH', `/agents/${created.body.agentId}/config`, patch);
      if (patched.status !== 200) throw new Error(`patch: ${patched.status} ${JSON.stringify(patched.body)}`);
    }
    return {
      id: created.body.agentId as string,
      did: created.body.did as string,
      filePath: created.body.filePath as string,
    };
  };
  const load = async (d: SpawnedDaemon, filePath: string) => {
    const loaded = await d.request('POST', '/agents/load', { filePath });
    if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
    return loaded.body as { id: string; filePath: string };
  };
  const inbox = async (d: SpawnedDaemon, id: string): Promise<InboxRow[]> => {
    const res = await d.request('GET', `/agents/${id}/inbox`);
    return res.status === 200 ? res.body.messages : [];
  };
  /** The inbox once it holds a message with `text` (any daemon answers: forwarded to the holder). */
  const arrived = async (id: string, text: string) => {
    for (const deadline = Date.now() + 20_000; ; ) {
      const rows = await inbox(alpha, id);
      if (rows.some((row) => row.text === text)) return rows;
      if (Date.now() > deadline) throw new Error(`failsafe: "${text}" did not arrive within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const send = async (from: string, to: string, text: string) => {
    const res = await alpha.request('POST', `/agents/${from}/outbox`, { text, channel: 'mesh', recipient: to });
    if (res.status !== 202) throw new Error(`outbox: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.messageId as number;
  };
  /** Resolves once the sender's outbox row is `delivered` (stored in the fleet's stream). */
  const delivered = async (from: string, messageId: number) => {
    for (const deadline = Date.now() + 15_000; (await outboxRow(from, messageId))?.status !== 'delivered'; ) {
      if (Date.now() > deadline) throw new Error(`failsafe: outbox row ${messageId} not delivered within 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const outboxRow = async (from: string, messageId: number) =>
    (
      (await alpha.request('GET', `/agents/${from}/outbox`)).body.messages as Array<{ id: number; status: string }>
    ).find((row) => row.id === messageId);

  const sender = await create(alpha, 'sender');
  const receiver = await create(beta, 'receiver', { handle: 'receiver' });
  const receiverFile = receiver.filePath;
  const receiverDid = receiver.did;

  t.test('a message to an agent on another daemon arrives once, over JetStream', async (t) => {
    const messageId = await send(sender.id, receiverDid, 'hello across the fleet');
    const rows = (await arrived(receiver.id, 'hello across the fleet')).filter(
      (row) => row.text === 'hello across the fleet',
    );
    t.equal(rows.length, 1, 'one inbox row');
    t.equal(rows[0]!.source, 'mesh', 'a mesh message to the agent');
    t.equal(rows[0]!.sender, sender.did, 'from the sender’s DID');
    t.equal(rows[0]!.data.mesh?.via, 'fleet', 'carried by the fleet');
    await delivered(sender.id, messageId);
    t.pass('the sender’s row is delivered');
    await send(sender.id, 'mesh:receiver', 'by handle');
    const byHandle = (await arrived(receiver.id, 'by handle')).filter((row) => row.text === 'by handle');
    t.equal(byHandle.length, 1, 'by handle (set after the agent loaded) too');
  });

  t.test('sent while the receiver’s daemon is stopped, it arrives once the agent is loaded again', async (t) => {
    await beta.stop();
    const messageId = await send(sender.id, receiverDid, 'while you were away');
    await delivered(sender.id, messageId);
    t.pass('stored in the fleet’s stream while no daemon holds the receiver');
    beta = await beta.restart();
    await fleetJoined(beta);
    await load(beta, receiverFile);
    const rows = await arrived(receiver.id, 'while you were away');
    t.equal(rows.filter((row) => row.text === 'while you were away').length, 1, 'arrives on its daemon, back');

    // Unloaded on beta, then loaded on alpha: the next holder reads what waits.
    t.equal((await beta.request('POST', `/agents/${receiver.id}/unload`)).status, 200);
    await send(sender.id, receiverDid, 'to wherever you are');
    await load(alpha, receiverFile);
    const moved = await arrived(receiver.id, 'to wherever you are');
    t.equal(moved.filter((row) => row.text === 'to wherever you are').length, 1, 'arrives on the daemon that took it');
  });

  t.test('a message published again under the same id is delivered once', async (t) => {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: nats.url });
    t.teardown(() => nc.close());
    const js = jetstream(nc);
    // A sender of our own (a daemon of the fleet could send this): its own key, its DID in the envelope.
    const envelope = signedEnvelope(testKey(), receiverDid, 'only once', undefined, 'fleet-test-once');
    const bytes = Buffer.from(JSON.stringify(envelope));
    const subject = `agt.fleet.talk.messages.${receiver.id}`;
    const first = await js.publish(subject, bytes, { msgID: envelope.id });
    const again = await js.publish(subject, bytes, { msgID: envelope.id });
    t.equal(again.duplicate, true, 'JetStream drops the republish within its duplicate window');
    t.equal(again.seq, first.seq);
    // Past the window (another NATS message id), the receiver's own record of message ids drops it.
    await js.publish(subject, bytes, { msgID: `${envelope.id}-later` });
    const jsm = await jetstreamManager(nc);
    for (
      const deadline = Date.now() + 20_000;
      (await jsm.streams.info('agt_fleet_talk_messages')).state.messages > 0;
    ) {
      if (Date.now() > deadline) throw new Error('failsafe: the stream still holds messages after 20 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const rows = (await inbox(alpha, receiver.id)).filter((row) => row.text === 'only once');
    t.equal(rows.length, 1, 'one inbox row for both copies taken');
    t.equal(rows[0]!.data.mesh?.id, 'fleet-test-once');
  });
}
