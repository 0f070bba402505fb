/**
 * With replication on, what a daemon acknowledges waits for a stored replica that holds it (docs/fleet.md,
 * "Replication" and "Messages"), so a daemon killed right after loses nothing it acknowledged. The replica
 * stream is made first with a message limit that refuses every copy (as NATS refusing writes), and lifted
 * when the test says so:
 *
 * - a fleet message reaches the inbox, copies keep failing, and the message stays in the work-queue stream;
 *   once copies can be stored one holds the inbox row and the message is acknowledged (leaves the stream);
 * - a dispatch (`POST /agents/{id}/trigger`) is not answered while no copy can be stored; once one can, it
 *   answers 202, and the copy holds the accepted turn.
 *
 * Then a copy larger than one NATS message goes whole to the object store, named by a base on the stream,
 * and the next copy is a delta after it; together they make the file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import t from 'tap';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { openCopy, storedCopy } from './helpers/fleet-replicas.js';
import { PASSPHRASE, signedEnvelope, testKey } from './helpers/mesh.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';

const FLEET = 'ack';
const REPLICAS = `agt_fleet_${FLEET}_replicas`;

/** Polls `check` (a state another process reaches) every 100 ms; fails after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; ) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`failsafe: ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  // Made before the daemon (which keeps a stream it finds): every copy is refused, as NATS refusing writes.
  await jsm.streams.add({
    name: REPLICAS,
    subjects: [`agt.fleet.${FLEET}.replicas.>`],
    allow_rollup_hdrs: true,
    max_msg_size: 1,
  });
  const d = await runDaemon(t, {
    settings: { fleet: { servers: [nats.url], name: FLEET, daemonName: 'solo' } },
    extensions: fleetManifest({ ttlSeconds: 6, replicate: true }),
    env: { AGT_OWNER_PASSPHRASE: PASSPHRASE },
  });
  /** The replica stream's message limit: 1 refuses every copy, -1 none. */
  const limit = async (bytes: number) => {
    const info = await jsm.streams.info(REPLICAS);
    await jsm.streams.update(REPLICAS, { ...info.config, max_msg_size: bytes });
  };
  const failures = async () => (await d.request('GET', '/fleet')).body.replication.failures as number;
  const receiver = { id: '', did: '' };

  t.test('the message is acknowledged only once a replica holds its inbox row', async (t) => {
    t.equal((await d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).status, 201);
    await fleetJoined(d);
    const created = await d.request('POST', '/agents/create', { name: 'receiver', directory: tempDir(t) });
    t.equal(created.status, 201);
    Object.assign(receiver, { id: created.body.agentId as string, did: created.body.did as string });
    const inStream = async () => (await jsm.streams.info(`agt_fleet_${FLEET}_messages`)).state.messages;
    // The receiver's consumer is there once its daemon reads its messages: then one is sent.
    await until('the receiver’s message stream', async () =>
      (await inStream().catch(() => -1)) >= 0 ? true : undefined,
    );
    const envelope = signedEnvelope(testKey(), receiver.did, 'keep me', undefined, 'fleet-ack-test');
    await jetstream(nc).publish(`agt.fleet.${FLEET}.messages.${receiver.id}`, Buffer.from(JSON.stringify(envelope)), {
      msgID: envelope.id,
    });
    await until('the inbox row', async () => {
      const rows = (await d.request('GET', `/agents/${receiver.id}/inbox`)).body.messages as Array<{ text: string }>;
      return rows?.some((row) => row.text === 'keep me') ? true : undefined;
    });
    // Two more failed copies after the row is committed: an acknowledgement that did not wait would be done.
    const seen = await failures();
    await until('two more failed copies', async () => ((await failures()) >= seen + 2 ? true : undefined));
    t.equal(await inStream(), 1, 'the message is still in the stream, not acknowledged');
    t.equal((await storedCopy(nc, FLEET, receiver.id)).messages.length, 0, 'no copy is stored yet');

    await limit(-1);
    await until('the acknowledgement', async () => ((await inStream()) === 0 ? true : undefined));
    t.pass('acknowledged once copies can be stored');
    const stored = await storedCopy(nc, FLEET, receiver.id);
    t.ok(stored.messages.length > 0, 'a copy is stored');
    const texts = openCopy(tempDir(t), 'receiver.agt', stored.bytes, (db) =>
      (db.prepare('SELECT text FROM agt_inbox').all() as Array<{ text: string }>).map((row) => row.text),
    );
    t.ok(texts.includes('keep me'), 'and it holds the inbox row');
  });

  t.test('a dispatch is answered only once a replica holds the turn it accepted', async (t) => {
    await limit(1);
    const seen = await failures();
    let answered = false;
    const answer = d
      .request('POST', `/agents/${receiver.id}/trigger`, { type: 'inbox', data: { text: 'wake up' } })
      .then((response) => {
        answered = true;
        return response;
      });
    // A copy was tried after the dispatch was committed, and failed: a 202 that did not wait would be here.
    await until('a failed copy', async () => ((await failures()) > seen ? true : undefined));
    t.notOk(answered, 'not answered while no copy can be stored');
    await limit(-1);
    const response = await answer;
    t.equal(response.status, 202, 'answered once one can');
    const turnId = String(response.body.turnId);
    const stored = await storedCopy(nc, FLEET, receiver.id);
    t.ok(stored.bytes.includes(Buffer.from(turnId)), 'the stored copy holds the accepted turn');
  });

  t.test('a copy larger than one message goes to the object store, and deltas follow it', async (t) => {
    const big = randomBytes(1_200_000);
    const put = await d.request('PUT', `/agents/${receiver.id}/files/content?path=big.bin`, {
      content: big.toString('base64'),
      encoding: 'base64',
    });
    t.ok(put.status === 200 || put.status === 201, `the file is stored (${put.status})`);
    const trigger = async (text: string) =>
      (await d.request('POST', `/agents/${receiver.id}/trigger`, { type: 'inbox', data: { text } })).status;
    t.equal(await trigger('after the big file'), 202);
    const first = await storedCopy(nc, FLEET, receiver.id);
    t.equal(first.kinds[0], 'object', 'the base names a copy in the object store');
    t.equal(createHash('sha256').update(first.bytes).digest('hex'), first.last.sha256, 'the copy as stored');
    t.equal(await trigger('one more'), 202);
    const next = await storedCopy(nc, FLEET, receiver.id);
    t.same(next.kinds.slice(0, 2), ['object', 'delta'], `then the pages changed since (${next.kinds})`);
    t.equal(createHash('sha256').update(next.bytes).digest('hex'), next.last.sha256, 'the copy they make as stored');
    openCopy(tempDir(t), 'big.agt', next.bytes, (db) => {
      t.match(db.prepare('PRAGMA integrity_check').get(), { integrity_check: 'ok' });
      t.match(db.prepare("SELECT length(content) AS n FROM agt_files WHERE path = 'big.bin'").get(), { n: big.length });
    });
  });
}
