/**
 * The daemon's own writes are in the tracked folders' index before the request answers,
 * through the `agt.agent-file-written` point (contracts/agent-file-changes.ts): a created agent
 * is counted, listed and started by name at once, with no wait for the folder watcher; a config change
 * (new name) is found by the new name at once; only what a walk would find is indexed. Also the
 * kernel's side of the point: every observer told, a failing or late one never fails the write.
 * One daemon (watching) serves the whole file.
 */
import t from 'tap';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentFileObservers, type AgentFileChange } from '../contracts/agent-file-changes.js';
import type { UmbilicalEvent } from '../contracts/events.js';
import { announceAgentFileChange } from '../kernel/extensions/agent-file-notices.js';
import { ExtensionPoints } from '../kernel/extensions/points.js';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';
import { nextLogEvent, trackedManifest } from './helpers/tracked-folders.js';

t.test('what the daemon writes is indexed before it answers', async (t) => {
  const agents = tempDir(t);
  const d = await runDaemon(t, { extensions: trackedManifest(), settings: { trackedFolders: [agents] } });
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
  // Its watchers are set up as the extension starts: after the listening line.
  const log = await daemonStarted(t, d);
  const added = () =>
    log.events.filter(
      (event): event is UmbilicalEvent<'tracked.changed'> =>
        event.event_type === 'tracked.changed' &&
        (event as UmbilicalEvent<'tracked.changed'>).payload.change === 'added',
    );
  const count = async () =>
    (await d.request('GET', '/tracked-folders')).body.folders.find((f: any) => f.path === agents)?.agentCount;
  const listed = async () =>
    (await d.request('GET', '/tracked-folders/agents')).body.agents as Array<{
      filePath: string;
      name: string;
      loaded: boolean;
      reviewed: boolean;
    }>;

  t.test('create, then count, list, stop and start by name at once', async (t) => {
    const created = await d.request('POST', '/agents/create', { name: 'Quick Study', directory: agents });
    const answeredAt = Date.now();
    t.equal(created.status, 201);
    const { agentId, filePath } = created.body;
    const announced = await log.waitFor(
      (e) =>
        e.event_type === 'tracked.changed' &&
        (e.payload as { change?: string; filePath?: string }).change === 'added' &&
        (e.payload as { filePath?: string }).filePath === filePath,
      'tracked.changed added',
    );
    t.equal(announced.agent_id, agentId);
    t.ok(announced.timestamp <= answeredAt, 'tracked.changed added went out before the answer');
    t.equal(await count(), 1, 'GET /tracked-folders counts it');
    t.match(
      (await listed()).find((a) => a.filePath === filePath),
      { name: 'Quick Study', loaded: true, reviewed: true },
    );
    t.equal((await d.request('POST', `/agents/${agentId}/stop`)).status, 200);
    t.match(
      await d.request('POST', '/agents/quick%20study/start'),
      { status: 200, body: { loaded: true, agent: { name: 'Quick Study' } } },
      'found by name, not loaded, with no wait',
    );

    const second = await d.request('POST', '/agents/create', { name: 'Second Helper', directory: agents, start: true });
    t.match(
      await d.request('POST', '/agents/second%20helper/start'),
      { status: 200, body: { loaded: false } },
      'create with start, then start by name',
    );
    t.equal(await count(), 2);
    await d.request('POST', `/agents/${second.body.agentId}/stop`);
    t.match(await d.request('POST', '/agents/SECOND%20HELPER/start'), { status: 200, body: { loaded: true } });

    // The watcher reports the created files later: not a second `added`. A file made after them is
    // reported after them, so once it is, theirs have been handled.
    const marker = nextLogEvent(
      log,
      'tracked.changed',
      (e) => e.payload.change === 'added' && e.payload.filePath === join(agents, 'marker.agt'),
    );
    await createAgentFile(agents, { name: 'marker' }, { fileName: 'marker.agt' });
    await marker;
    t.equal(added().filter((e) => e.payload.filePath === filePath).length, 1, 'announced once');
    t.equal(await count(), 3);
  });

  t.test('create in a new folder, and in a folder no walk reaches', async (t) => {
    const fresh = tempDir(t);
    const created = await d.request('POST', '/agents/create', { name: 'Newcomer', directory: fresh });
    t.equal(created.status, 201);
    t.same(
      (await d.request('GET', '/tracked-folders')).body.folders.find((f: any) => f.path === fresh),
      { path: fresh, exists: true, agentCount: 1, truncated: false },
      'its folder is tracked and counts it',
    );
    await d.request('POST', `/agents/${created.body.agentId}/stop`);
    t.match(await d.request('POST', '/agents/newcomer/start'), { status: 200, body: { loaded: true } });

    // A dot-folder inside a tracked folder: create does not track it, and walks skip it.
    mkdirSync(join(agents, '.private'));
    const hidden = await d.request('POST', '/agents/create', {
      name: 'Hidden Helper',
      directory: join(agents, '.private'),
    });
    t.equal(hidden.status, 201);
    t.notOk(
      (await listed()).some((a) => a.filePath === hidden.body.filePath),
      'not indexed: the walk would not find it',
    );
    await d.request('POST', `/agents/${hidden.body.agentId}/stop`);
    t.match(await d.request('POST', '/agents/hidden%20helper/start'), { status: 404 });
  });

  t.test('a new name is found at once, the old one no longer', async (t) => {
    const created = await d.request('POST', '/agents/create', { name: 'Before Rename', directory: agents });
    const { agentId, filePath } = created.body;
    t.equal((await d.request('PATCH', `/agents/${agentId}/config`, { name: 'After Rename' })).status, 200);
    await d.request('POST', `/agents/${agentId}/stop`);
    t.match(
      (await listed()).find((a) => a.filePath === filePath),
      { name: 'After Rename', loaded: false },
    );
    t.match(await d.request('POST', '/agents/before%20rename/start'), { status: 404 });
    t.match(await d.request('POST', '/agents/after%20rename/start'), {
      status: 200,
      body: { loaded: true, agent: { name: 'After Rename' } },
    });
  });
});

t.test('the kernel tells every observer and never fails for one', async (t) => {
  const points = new ExtensionPoints();
  const seen: string[] = [];
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, message?: string) => void warnings.push(message ?? '') };
  points.provide('good', agentFileObservers, {
    written: (change) => void seen.push(`good:${change.change}:${change.filePath}`),
  });
  points.provide('thrower', agentFileObservers, {
    written: () => {
      throw new Error('boom');
    },
  });
  points.provide('slow', agentFileObservers, { written: () => new Promise<void>(() => {}) });
  let frozen = false;
  points.provide('late', agentFileObservers, {
    written: async (change: AgentFileChange) => {
      frozen = Object.isFrozen(change);
      seen.push('late:done');
    },
  });
  const change: AgentFileChange = { change: 'created', filePath: '/x/a.agt', agentId: 'agt-a' };
  await announceAgentFileChange(points, logger, change, 50);
  t.same(seen.sort(), ['good:created:/x/a.agt', 'late:done']);
  t.ok(frozen, 'observers get a frozen copy');
  t.match(warnings.sort(), [/extension slow did not answer within 50 ms/, /extension thrower failed: boom/]);
  await announceAgentFileChange(new ExtensionPoints(), logger, change);
  t.equal(warnings.length, 2, 'no observers: nothing told, nothing logged');
});
