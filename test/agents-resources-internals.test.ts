/**
 * `kernel.inbox.deliver`, the kernel's delivery that channels and the mesh call, in process: the row is
 * committed before its `inbox.received` event (a subscriber reads it at once), and an unknown agent is
 * `not_found`.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

t.test('inbox delivery commits the row before its event', async (t) => {
  const d = await bootDaemon(t);
  const path = await createAgentFile(tempDir(t), { name: 'plain' });
  const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id as string;
  const seen: unknown[] = [];
  t.teardown(
    d.daemon.kernel.bus.subscribe((event) => {
      if (event.event_type === 'inbox.received')
        seen.push(
          d.daemon.kernel.registry.resolve(id).file.inbox.get((event.payload as { messageId: number }).messageId)?.text,
        );
    }),
  );
  const delivered = await d.daemon.kernel.inbox.deliver(id, { source: 'channel:test', text: 'three' });
  t.type(delivered.messageId, 'number');
  t.same(seen, ['three'], 'the row is readable when the event arrives');
  t.same(
    (await d.request('GET', `/agents/${id}/inbox`)).body.messages.map((m: { text: string }) => m.text),
    ['three'],
  );
  await t.rejects(d.daemon.kernel.inbox.deliver('nobody', { source: 'api', text: 'x' }), { code: 'not_found' });
});
