import t from 'tap';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { createAgentFile } from './helpers/agent-file.js';

t.test('loop page, loop list and one loop', async (t) => {
  const dir = tempDir(t);
  const filePath = await createAgentFile(
    dir,
    {
      name: 'looper',
      loops: [
        { name: 'research', goal: 'dig', enabled: true, tools: ['loop_send', 'fs_read'] },
        { name: 'sleeper', goal: 'rest', enabled: false },
      ],
    },
    {
      seed(file) {
        for (let i = 1; i <= 120; i++) file.loop.append({ role: i % 2 ? 'user' : 'assistant', content: `main ${i}` });
        for (let i = 1; i <= 3; i++) file.loop.append({ loop: 'research', role: 'user', content: `research ${i}` });
      },
    },
  );
  const d = await runDaemon(t);
  t.equal((await d.request('POST', '/agents/load', { filePath })).status, 200);

  const last = await d.request('GET', '/agents/looper/loop');
  t.equal(last.status, 200);
  t.equal(last.body.total, 120);
  t.equal(last.body.rows.length, 50, 'default limit 50');
  t.equal(last.body.offset, 70, 'without offset: the last page');
  t.equal(last.body.rows.at(-1).content, 'main 120');
  t.type(last.body.rows[0].created_at, 'number');

  const first = await d.request('GET', '/agents/looper/loop?offset=0&limit=1000');
  t.equal(first.body.rows.length, 120, 'limit clamped to 500 (all 120 rows fit)');
  t.equal(first.body.rows[0].content, 'main 1');
  t.equal((await d.request('GET', '/agents/looper/loop?limit=0')).body.rows.length, 1, 'limit clamped to 1');

  const inner = await d.request('GET', '/agents/looper/loop?loop=research');
  t.same(
    inner.body.rows.map((row: any) => row.content),
    ['research 1', 'research 2', 'research 3'],
  );
  t.equal((await d.request('GET', '/agents/looper/loop?loop=nope')).status, 404);
  t.equal((await d.request('GET', '/agents/looper/loop?offset=-1')).status, 400);

  const list = await d.request('GET', '/agents/looper/loops');
  t.equal(list.status, 200);
  t.same(
    list.body.loops.map((loop: any) => [loop.name, loop.entryCount, loop.enabled]),
    [
      ['main', 120, true],
      ['research', 3, true],
      ['sleeper', 0, false],
    ],
  );
  t.equal(list.body.loops[0].effectiveTools, null, 'main: every enabled tool');
  t.same(
    list.body.loops[1].effectiveTools.sort(),
    ['fs_read', 'loop_send'],
    'allow-list intersected with the host tools',
  );
  t.equal(list.body.loops[0].state, 'idle');

  const one = await d.request('GET', '/agents/looper/loops/research');
  t.match(one.body, { name: 'research', goal: 'dig', entryCount: 3, running: false });
  t.equal((await d.request('GET', '/agents/looper/loops/nope')).status, 404);
  t.equal((await d.request('GET', '/agents/nobody/loops')).status, 404);
});
