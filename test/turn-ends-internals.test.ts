/**
 * An end committed but not yet written to the streams when the process dies is emitted again, unchanged,
 * after the restart (test/turn-ends.test.ts has the real kills). In process: the kernel's delivery is held
 * (the streams never confirm, as if the process died between the commit of the end and the write) and the
 * file is copied as a crash leaves it, then loaded into a second daemon.
 */
import t from 'tap';
import { openSse } from './helpers/sse-client.js';
import { until } from './helpers/turn-ends.js';
import { crashCopy, runtimeHarness } from './fixtures/runtime/harness.js';

t.test('an end committed but not yet written to the streams is emitted again, unchanged, after a crash', async (t) => {
  const h1 = await runtimeHarness(t);
  const id = await h1.agent();
  const file = h1.d.daemon.kernel.registry.resolve(id).file;
  // The streams never confirm: as if the process died between the commit of the end and the write.
  const held: Array<(sent: boolean) => void> = [];
  h1.d.daemon.kernel.bus.setDelivery({ whenSent: (_cursor, done) => void held.push(done) });
  h1.model.push({ text: 'the answer' });
  const turnId = (await h1.d.request('POST', `/agents/${id}/chat`, { text: 'question' })).body.turnId as string;
  const end = await h1.ended(turnId);
  t.match(
    file.queue.get(turnId),
    { ended: { type: 'turn.completed', payload: { turn_id: turnId, text: 'the answer' } } },
    'the end is committed with the row',
  );
  const origin = file.queue.get(turnId)!.ended!.sentAt?.[0];
  t.equal(origin?.epoch, h1.d.daemon.kernel.bus.epoch, 'recorded with the run it went out in');
  t.ok(
    Number.isInteger(origin?.cursor) && origin!.cursor > 0 && origin!.cursor <= h1.d.daemon.kernel.bus.latest,
    'and its cursor',
  );
  const copy = crashCopy(h1, id);
  // Once the streams took it, the row goes.
  h1.d.daemon.kernel.bus.setDelivery(h1.d.daemon.kernel.eventStream);
  for (const done of held.splice(0)) done(true);
  await until(() => file.queue.count() === 0, 'the row deleted once the end was streamed');

  const h2 = await runtimeHarness(t);
  const loaded = await h2.d.request('POST', '/agents/load', { filePath: copy });
  t.equal(loaded.status, 200);
  const again = await h2.ended(turnId);
  t.equal(again.event_type, 'turn.completed');
  t.same(again.payload, end.payload, 'the same event, payload and turn id');
  t.equal(again.turn_id, turnId);
  const agent = h2.d.daemon.kernel.registry.resolve(id);
  await until(() => agent.file.queue.count() === 0, 'streamed again, the row goes');
  t.equal(
    h2.events.filter((e) => e.event_type === 'turn.completed' && (e.payload as { turn_id?: string }).turn_id === turnId)
      .length,
    1,
    'announced once',
  );
  t.equal(h2.model.calls.length, 0, 'nothing ran again');
  // A kill may also fall after the socket write and before the delete: streams resuming from the first
  // run at or past the end's cursor had it, and are not given the repeat; one resuming before it is.
  const ends = async (since: number) => {
    const stream = await openSse(`${h2.d.url}/events?epoch=${origin!.epoch}&since=${since}`, {
      authorization: `Bearer ${h2.d.token}`,
    });
    t.teardown(() => stream.close());
    let latest = 0;
    const found: string[] = [];
    for (;;) {
      const message = await stream.next();
      if (message.event === 'stream.hello') latest = JSON.parse(message.data!).latestCursor;
      if (message.event === 'turn.completed' && JSON.parse(message.data!).event.payload.turn_id === turnId)
        found.push(message.id!);
      if (message.id !== undefined && Number(message.id) >= latest) return found.length;
    }
  };
  t.equal(await ends(origin!.cursor), 0, 'a stream that had the end (resumed at its cursor) is not given the repeat');
  t.equal(await ends(origin!.cursor + 7), 0, 'nor one resumed past it');
  t.equal(await ends(origin!.cursor - 1), 1, 'a stream resumed before it gets it once');
  const logs = (await h2.d.request('GET', `/agents/${id}/logs?event=recovered`)).body.logs;
  t.match(logs[0]?.message, /1 turn end\(s\) that had not reached the event streams announced again/);
});
