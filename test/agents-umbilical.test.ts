/**
 * The umbilical window's mechanics, in process: its cursor rules, truncation and eviction need thousands of
 * events with payloads of the test's choosing (emitted on the kernel's bus), which no client route makes.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

t.test('the umbilical window: opt-in, since_seq/limit rules, truncation, eviction', async (t) => {
  const d = await bootDaemon(t);
  const dir = tempDir(t);
  const bus = d.daemon.kernel.bus;
  const off = (await d.request('POST', '/agents/load', { filePath: await createAgentFile(dir, { name: 'quiet' }) }))
    .body.id as string;
  const onRef = (
    await d.request('POST', '/agents/load', {
      filePath: await createAgentFile(dir, { name: 'chatty', umbilical: { log: { enabled: true } } }),
    })
  ).body;
  const on = onRef.id as string;
  const window = (id: string, query = '') => d.request('GET', `/agents/${id}/umbilical/events${query}`);
  const say = (id: string, message: string) =>
    bus.emit('log.written', { agentId: id, payload: { level: 'info', origin: null, event: null, message } }).seq;

  say(off, 'ignored');
  t.same((await window(off)).body, { agentId: off, events: [], last_seq: null, log_enabled: false });
  t.same((await window(off, '?since_seq=7')).body.last_seq, 7, 'off: last_seq echoes since_seq');

  const first = await window(on);
  t.equal(first.body.log_enabled, true);
  t.equal(first.body.events[0].event_type, 'agent.loaded', 'recorded from the load on');
  const loadedSeq = first.body.events[0].seq as number;
  t.equal(first.body.oldest_seq, loadedSeq);
  t.equal(first.body.last_seq, loadedSeq);

  const seqs = [say(on, 'a'), say(on, 'b'), say(on, 'c')];
  const page = await window(on, `?since_seq=${loadedSeq}&limit=2`);
  t.same(
    page.body.events.map((e: { seq: number }) => e.seq),
    seqs.slice(0, 2),
    'strictly greater, oldest first, at most limit',
  );
  t.equal(page.body.last_seq, seqs[1]);
  t.same(Object.keys(page.body.events[0]).sort(), ['event_type', 'payload', 'seq', 'source', 'timestamp', 'truncated']);
  t.same(page.body.events[0].payload, { level: 'info', origin: null, event: null, message: 'a' });
  const none = await window(on, `?since_seq=${seqs[2]}`);
  t.same([none.body.events, none.body.last_seq], [[], seqs[2]], 'nothing new: last_seq is the since_seq passed');

  const big = say(on, 'x'.repeat(5000));
  const truncated = (await window(on, `?since_seq=${big - 1}`)).body.events[0];
  t.equal(truncated.truncated, true);
  t.equal(truncated.payload._truncated, true);
  t.type(truncated.payload.preview, 'string');
  t.ok(truncated.payload.preview.length < 4096);
  t.equal((await window(on, `?since_seq=${seqs[2]}`)).body.events[0].truncated, true);

  for (let i = 0; i < 2100; i++) say(on, `bulk ${i}`);
  const full = await window(on);
  t.equal(full.body.events.length, 500, 'default limit 500');
  t.ok(full.body.oldest_seq > loadedSeq + 1, 'old events were evicted');
  t.equal(full.body.events[0].seq, full.body.oldest_seq);
  const stale = await window(on, `?since_seq=${loadedSeq}&limit=2000`);
  t.ok(loadedSeq < stale.body.oldest_seq - 1, 'a cursor before the window shows as since_seq < oldest_seq - 1');
  t.equal(stale.body.events.length, 2000);
  t.equal(stale.body.events[0].seq, stale.body.oldest_seq);

  for (const query of ['?limit=0', '?limit=2001', '?since_seq=-1', '?since_seq=x']) {
    const res = await window(on, query);
    t.same([res.status, res.body.code], [400, 'bad_request'], query);
  }
  t.equal((await window('nobody')).status, 404);

  // Turning it off through the config forgets the window.
  await d.request('PUT', `/agents/${on}/config`, { ...onRef.config, umbilical: { log: { enabled: false } } });
  t.same((await window(on)).body, { agentId: on, events: [], last_seq: null, log_enabled: false });
});
