/**
 * The tracked folders' watcher: a reviewed autostart file dropped in starts; a moved file is
 * found at its new path (and a running agent runs on from there); a loaded agent's file deleted
 * unloads it with a reason and nothing crashes; symbolic links out of the folder are never followed,
 * by the walk or the watcher.
 */
import t from 'tap';
import { copyFileSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';
import { createAgentFile } from './helpers/agent-file.js';
import { nextLogEvent, reviewedAgentFile, trackedManifest } from './helpers/tracked-folders.js';

t.test('files added, moved and removed in a watched folder', async (t) => {
  const root = tempDir(t);
  const staging = tempDir(t);
  const outside = tempDir(t);
  mkdirSync(join(root, 'sub'));
  const d = await runDaemon(t, { extensions: trackedManifest(), settings: { trackedFolders: [root] } });
  // Its watchers are set up as the extension starts: after the listening line.
  const log = await daemonStarted(t, d);
  // The listing answers once the first walk and the watcher's are over.
  t.same((await d.request('GET', '/tracked-folders')).body.folders, [
    { path: root, exists: true, agentCount: 0, truncated: false },
  ]);

  // Links out of the folder, made while it is watched: never followed.
  const outsider = await reviewedAgentFile(d, outside, { name: 'Outsider', autostart: true });
  symlinkSync(outside, join(root, 'link-to-outside'));
  symlinkSync(outsider, join(root, 'alias.agt'));

  t.test('a reviewed autostart file dropped in starts', async (t) => {
    const staged = await reviewedAgentFile(d, staging, { name: 'Dropper', autostart: true });
    const added = nextLogEvent(
      log,
      'tracked.changed',
      (e) => e.payload.change === 'added' && e.payload.filePath === join(root, 'dropper.agt'),
    );
    const started = nextLogEvent(log, 'agent.started');
    copyFileSync(staged, join(root, 'dropper.agt'));
    t.match((await added).payload, { folder: root });
    const event = await started;
    t.match((await d.request('GET', `/agents/${event.agent_id}`)).body, {
      filePath: join(root, 'dropper.agt'),
      config: { name: 'Dropper' },
    });
    t.notOk(
      (await d.request('GET', '/agents')).body.some((a: any) => a.name === 'Outsider'),
      'the linked agent was not started',
    );
  });

  t.test('an unreviewed or manual file dropped in is indexed, not started', async (t) => {
    const added = nextLogEvent(log, 'tracked.changed', (e) => e.payload.filePath === join(root, 'sub', 'quiet.agt'));
    await createAgentFile(join(root, 'sub'), { name: 'Quiet', autostart: true }, { fileName: 'quiet.agt' });
    await added;
    t.notOk(
      (await d.request('GET', '/agents')).body.some((a: any) => a.name === 'Quiet'),
      'unreviewed: not started',
    );
    const listed = (await d.request('GET', '/tracked-folders/agents')).body.agents;
    t.same(listed.map((a: any) => a.name).sort(), ['Dropper', 'Quiet'], 'links out of the folder are not listed');
  });

  t.test('a moved file is found at its new path', async (t) => {
    const moved = nextLogEvent(log, 'tracked.changed', (e) => e.payload.change === 'moved');
    renameSync(join(root, 'sub', 'quiet.agt'), join(root, 'quiet-moved.agt'));
    t.match((await moved).payload, { filePath: join(root, 'quiet-moved.agt'), from: join(root, 'sub', 'quiet.agt') });
    await d.request('POST', '/agents/review/accept', { filePath: join(root, 'quiet-moved.agt') });
    const started = await d.request('POST', '/agents/QUIET/start');
    t.match(started, { status: 200, body: { loaded: true } });
    t.equal((await d.request('GET', `/agents/${started.body.agent.id}`)).body.filePath, join(root, 'quiet-moved.agt'));
  });

  t.test('a running agent whose file moves runs on from the new path', async (t) => {
    const id = (await d.request('GET', '/agents')).body.find((a: any) => a.name === 'Dropper').id;
    const moved = nextLogEvent(log, 'tracked.changed', (e) => e.payload.change === 'moved' && e.agent_id === id);
    const startedAgain = nextLogEvent(log, 'agent.started', (e) => e.agent_id === id);
    renameSync(join(root, 'dropper.agt'), join(root, 'sub', 'dropper.agt'));
    await moved;
    await startedAgain;
    t.equal((await d.request('GET', `/agents/${id}`)).body.filePath, join(root, 'sub', 'dropper.agt'));
  });

  t.test('a loaded agent whose file is deleted is unloaded with a reason', async (t) => {
    const id = (await d.request('GET', '/agents')).body.find((a: any) => a.name === 'Quiet').id;
    const unloaded = nextLogEvent(log, 'agent.unloaded', (e) => e.agent_id === id);
    const removed = nextLogEvent(log, 'tracked.changed', (e) => e.payload.change === 'removed' && e.agent_id === id);
    rmSync(join(root, 'quiet-moved.agt'));
    t.match((await unloaded).payload, { name: 'Quiet', reason: 'file_removed' });
    t.match((await removed).payload, { filePath: join(root, 'quiet-moved.agt') });
    t.match(await d.request('GET', `/agents/${id}`), { status: 404 });
    t.equal((await d.request('GET', '/health')).status, 200, 'the daemon carries on');
    t.match(await d.request('POST', '/agents/quiet/start'), { status: 404 }, 'gone from the index');
  });

  t.test('a file unreadable when first seen (a copy under way) starts once it is whole', async (t) => {
    const staged = await reviewedAgentFile(d, staging, { name: 'Slowcopy', autostart: true });
    const seen = nextLogEvent(log, 'tracked.changed', (e) => e.payload.filePath === join(root, 'slow.agt'));
    writeFileSync(join(root, 'slow.agt'), 'the first bytes of a copy');
    t.match((await seen).payload, { change: 'added' });
    const started = nextLogEvent(log, 'agent.started');
    copyFileSync(staged, join(root, 'slow.agt'));
    const event = await started;
    t.match((await d.request('GET', `/agents/${event.agent_id}`)).body, {
      filePath: join(root, 'slow.agt'),
      config: { name: 'Slowcopy' },
    });
  });

  t.test('links out of the folder: not found by name either', async (t) => {
    t.match(await d.request('POST', '/agents/outsider/start'), { status: 404 });
  });
});
