/**
 * Finding agents that are not loaded: `POST /agents/{id}/start` by id, handle or name
 * (case-insensitive) across tracked folders, 404 none, 409 `ambiguous_agent` with candidates, 403
 * review required; and the `/tracked-folders` routes (add, list, remove, agents read without loading).
 */
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { createAgentFile } from './helpers/agent-file.js';
import { reviewedAgentFile, trackedManifest } from './helpers/tracked-folders.js';

// One daemon for the file: the second test starts from no tracked folders and no loaded agents.
const one = tempDir(t);
const two = tempDir(t);
const d = await runDaemon(t, {
  extensions: trackedManifest(true, { watch: false }),
  settings: { trackedFolders: [one, two] },
});

t.test('start by id, handle or name across tracked folders', async (t) => {
  mkdirSync(join(two, 'nested', 'deeper'), { recursive: true });
  const scout = await reviewedAgentFile(d, one, {
    name: 'Scout Ranger',
    handle: 'scout',
    triggers: { on_startup: { enabled: true, targets: [{ scope: 'agent' }] } },
  });
  const deep = await reviewedAgentFile(d, join(two, 'nested', 'deeper'), { name: 'Deep Diver', id: 'agt-deep-diver' });
  await reviewedAgentFile(d, one, { name: 'Twin' }, 'twin-a.agt');
  await reviewedAgentFile(d, two, { name: 'twin', handle: 'twin-b' }, 'twin-b.agt');
  await createAgentFile(one, { name: 'Unvetted' });

  const byHandle = await d.request('POST', '/agents/SCOUT/start');
  t.match(
    byHandle,
    { status: 200, body: { success: true, loaded: true, startupTriggered: true, agent: { name: 'Scout Ranger' } } },
    'by handle, any case',
  );
  t.match((await d.request('GET', '/agents')).body, [{ name: 'Scout Ranger', filePath: scout }]);
  t.match(
    await d.request('POST', '/agents/Scout%20Ranger/start'),
    { status: 200, body: { loaded: false, startupTriggered: false } },
    'loaded now: not started twice',
  );

  t.match(
    await d.request('POST', '/agents/deep%20DIVER/start'),
    { status: 200, body: { loaded: true, agent: { name: 'Deep Diver' } } },
    'by name, any case, two folders down',
  );
  await d.request('POST', '/agents/agt-deep-diver/stop');
  t.match(await d.request('POST', '/agents/AGT-DEEP-DIVER/start'), { status: 200, body: { loaded: true } }, 'by id');
  t.equal((await d.request('GET', '/agents')).body.find((a: any) => a.name === 'Deep Diver').filePath, deep);

  const ambiguous = await d.request('POST', '/agents/twin/start');
  t.equal(ambiguous.status, 409);
  t.equal(ambiguous.body.code, 'ambiguous_agent');
  t.same(
    ambiguous.body.candidates.sort((a: any, b: any) => a.filePath.localeCompare(b.filePath)),
    [
      { name: 'Twin', handle: null, filePath: join(one, 'twin-a.agt') },
      { name: 'twin', handle: 'twin-b', filePath: join(two, 'twin-b.agt') },
    ].sort((a, b) => a.filePath.localeCompare(b.filePath)),
  );
  t.match(
    await d.request('POST', '/agents/twin-b/start'),
    { status: 200, body: { agent: { name: 'twin' } } },
    'the handle tells them apart',
  );

  t.match(await d.request('POST', '/agents/unvetted/start'), { status: 403, body: { code: 'AGENT_REVIEW_REQUIRED' } });
  t.match(await d.request('POST', '/agents/nobody-at-all/start'), { status: 404, body: { code: 'not_found' } });

  // Without a watcher a file written later is found by walking again on a miss.
  await reviewedAgentFile(d, two, { name: 'Latecomer' });
  t.match(await d.request('POST', '/agents/latecomer/start'), { status: 200, body: { loaded: true } });
});

t.test('/tracked-folders: add, list, agents without loading, remove', async (t) => {
  const root = tempDir(t);
  const inner = join(root, 'inner');
  mkdirSync(inner);
  mkdirSync(join(root, 'node_modules'));
  mkdirSync(join(root, '.hidden'));
  for (const agent of (await d.request('GET', '/agents')).body)
    t.equal((await d.request('POST', `/agents/${agent.id}/stop`)).status, 200);
  t.equal((await d.request('PATCH', '/settings', { trackedFolders: [], maxScanDepth: 2 })).status, 200);
  t.same((await d.request('GET', '/tracked-folders')).body, { folders: [], maxScanDepth: 2 });

  const a = await reviewedAgentFile(d, root, { name: 'Alpha', handle: 'alpha', autostart: true });
  const b = await createAgentFile(inner, { name: 'Beta' });
  await createAgentFile(join(root, 'node_modules'), { name: 'Hidden Module' });
  await createAgentFile(join(root, '.hidden'), { name: 'Hidden Dot' });
  mkdirSync(join(inner, 'x', 'y'), { recursive: true });
  await createAgentFile(join(inner, 'x'), { name: 'Two Down' });
  await createAgentFile(join(inner, 'x', 'y'), { name: 'Too Deep' });
  writeFileSync(join(root, 'notes.agt'), 'not an agent');

  for (const [body, code] of [
    [{ path: 'relative/dir' }, 400],
    [{ path: join(root, 'missing') }, 400],
    [{ path: join(root, 'notes.agt') }, 400],
    [{}, 400],
  ] as const) {
    const res = await d.request('POST', '/tracked-folders', body);
    t.equal(res.status, code, JSON.stringify(body));
    t.equal(res.body.code, 'bad_request');
  }
  const added = await d.request('POST', '/tracked-folders', { path: root });
  t.same(added, {
    status: 201,
    body: { path: root, exists: true, agentCount: 3, truncated: false },
    headers: added.headers,
  });
  t.match(
    await d.request('POST', '/tracked-folders', { path: inner }),
    { status: 409, body: { code: 'conflict', coveredBy: root } },
    'a folder inside a tracked one is not added twice',
  );
  t.match(await d.request('POST', '/tracked-folders', { path: root }), { status: 409, body: { coveredBy: root } });
  t.same((await d.request('GET', '/settings/trackedFolders')).body.value, [root], 'persisted in settings');

  const agents = (await d.request('GET', '/tracked-folders/agents')).body.agents;
  t.same(
    agents.map((x: any) => x.filePath).sort(),
    [a, b, join(inner, 'x', 'Two Down.agt')].sort(),
    'dot-folders, node_modules and folders below maxScanDepth skipped, a broken file left out',
  );
  t.match(
    agents.find((x: any) => x.filePath === a),
    { name: 'Alpha', handle: 'alpha', loaded: false, reviewed: true, autostart: true, passwordProtected: false },
  );
  t.match(
    agents.find((x: any) => x.filePath === b),
    { name: 'Beta', handle: null, reviewed: false, autostart: false },
  );
  t.same(
    (await d.request('GET', '/agents')).body,
    [],
    'listing loaded nothing (and adding a folder autostarts nothing)',
  );
  // Not leased either: the file loads at once.
  t.match(await d.request('POST', '/agents/alpha/start'), { status: 200, body: { loaded: true } });
  t.match(
    (await d.request('GET', '/tracked-folders/agents')).body.agents.find((x: any) => x.filePath === a),
    { loaded: true },
  );

  t.same((await d.request('DELETE', `/tracked-folders?path=${encodeURIComponent(join(root, 'other'))}`)).body, {
    success: false,
  });
  t.same((await d.request('DELETE', `/tracked-folders?path=${encodeURIComponent(root)}`)).body, { success: true });
  t.same((await d.request('GET', '/tracked-folders')).body.folders, []);
  t.same((await d.request('GET', '/tracked-folders/agents')).body.agents, []);
  t.equal((await d.request('DELETE', '/tracked-folders')).status, 400, 'path is required');
  t.match(await d.request('POST', '/agents/beta/start'), { status: 404 }, 'an untracked folder is not searched');
  t.same(
    (await d.request('GET', '/agents')).body.map((x: any) => x.name),
    ['Alpha'],
    'untracking unloads nothing',
  );

  // A folder that disappears is listed as missing, not dropped.
  t.equal((await d.request('PATCH', '/settings', { trackedFolders: [join(root, 'gone')] })).status, 200);
  t.same((await d.request('GET', '/tracked-folders')).body.folders, [
    { path: join(root, 'gone'), exists: false, agentCount: 0, truncated: false },
  ]);
  mkdirSync(join(root, 'gone'));
  await createAgentFile(join(root, 'gone'), { name: 'Back' });
  t.same(
    (await d.request('GET', '/tracked-folders')).body.folders,
    [{ path: join(root, 'gone'), exists: true, agentCount: 1, truncated: false }],
    'a folder made later is walked',
  );
});
