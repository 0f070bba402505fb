/**
 * Backups, restore and bounded growth (issue 29, docs/backups.md), against one in-process daemon: a
 * backup taken while chats write restores to the same history; a sealed backup needs the unlocked owner
 * identity; a restore never overwrites a loaded agent's file; the schedule keeps N copies; retention
 * deletes old rows and the file shrinks after the checkpoint; the quota stops the agent's own inserts and
 * files while the daemon's writes go on; a hand-made Letta .af imports (and exports back).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { agentLocator } from '../contracts/points.js';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { SEALED_MAGIC } from '../kernel/storage/seal.js';
import { endSqliteJobs, runSqliteJob, sqliteJobsRunning } from '../kernel/storage/sqlite-job.js';
import { runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';
import { createAgentFile } from './helpers/agent-file.js';
import { agtInProcess } from './helpers/cli-in-process.js';

const PASSPHRASE = 'owner passphrase';

/** Main's loop rows of an agent file that is not loaded (read-only). */
function loopRows(path: string): Array<{ id: number; role: string; content: unknown }> {
  const file = AgentFile.open(path, { readonly: true });
  try {
    return file.loop.list('main').map((row) => ({ id: row.id, role: row.role, content: row.content }));
  } finally {
    void file.close();
  }
}

/** Runs `agt` against the test daemon in this process (helpers/cli-in-process.ts: no Node start per
 * command; the CLI's process-level behaviour is checked in cli-agt.test.ts). */
function agt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return agtInProcess(args, { NO_COLOR: '1', AGT_DAEMON_URL: h.d.url, AGT_DAEMON_TOKEN: h.d.token });
}

let h: RuntimeHarness;
let dir: string;

t.before(async () => {
  h = await runtimeHarness(t);
  dir = h.dir;
  mkdirSync(join(dir, 'agents'));
  await h.d.request('PATCH', '/settings', { agentsFolder: join(dir, 'agents') });
  t.equal((await h.d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).status, 201);
});

// First: with one agent loaded, each scheduled run copies one file.
t.test('scheduled backups keep the newest N per agent, loaded and tracked', async (t) => {
  const id = await h.agent();
  // A tracked agent file that is not loaded, listed by the agent locator (tracked-folders offers it in a full daemon).
  mkdirSync(join(dir, 'tracked'));
  const trackedId = `agt-tracked-${Date.now()}`;
  const trackedPath = await createAgentFile(join(dir, 'tracked'), { id: trackedId, name: 'tracked-one' });
  h.d.daemon.kernel.contributions.points.provide('test-locator', agentLocator, { locate: (ref) => (ref === 'tracked-one' ? [trackedPath] : []), list: () => [trackedPath] });
  const backups = join(dir, 'scheduled');
  // Every second (cron with seconds): the first copy comes from the real timer.
  t.equal((await h.d.request('PATCH', '/settings', { backups: { every: '* * * * * *', keep: 2, dir: backups } })).status, 200);
  const first = await h.waitFor((e) => e.event_type === 'backup.completed' && e.agent_id === id && (e.payload as { scheduled: boolean }).scheduled, 'a scheduled backup');
  t.ok((first.payload as { path: string }).path.startsWith(join(backups, id)));
  const scheduler = h.d.daemon.kernel.storage.scheduler;
  // Then two more runs by the injectable tick (a run in progress is shared, so wait one out each time).
  await scheduler.runNow();
  await scheduler.runNow();
  await scheduler.runNow();
  const copies = readdirSync(join(backups, id));
  t.equal(copies.length, 2, `keep: 2 (${copies.join(', ')})`);
  t.equal(readdirSync(join(backups, trackedId)).length, 2, 'the tracked file that is not loaded is copied too');
  t.equal(h.d.daemon.kernel.registry.list().some((agent) => agent.id === trackedId), false, 'without loading it');
  const byName = await h.d.request('POST', '/agents/tracked-one/backup', { path: dir });
  t.equal(byName.status, 200, 'POST /agents/{id}/backup finds a tracked file that is not loaded');
  t.equal(byName.body.agentId, trackedId);
  t.equal(h.d.daemon.kernel.registry.list().some((agent) => agent.id === trackedId), false, 'and copies it without loading it');
  t.equal((await h.d.request('POST', '/agents/nobody-at-all/backup', {})).status, 404);
  const events = h.of('backup.completed', id).filter((e) => e.payload.scheduled);
  t.ok(events.some((e) => e.payload.removed.length > 0), 'a run names the copies it removed');
  const status = (await h.d.request('GET', '/backups')).body;
  t.equal(status.enabled, true);
  t.equal(status.keep, 2);
  t.ok(status.lastRun.completed >= 1);
  t.equal((await h.d.request('PATCH', '/settings', { backups: null })).status, 200);
  t.equal((await h.d.request('GET', '/backups')).body.enabled, false);
  const bad = await h.d.request('PATCH', '/settings', { backups: { every: 'not a cron' } });
  t.equal(bad.status, 400, 'a bad cron expression is refused');
});

t.test('a backup taken while 5 chats per second write restores to the same history (same id and DID)', async (t) => {
  const id = await h.agent();
  const agentPath = h.d.daemon.kernel.registry.resolve(id).filePath;
  const did = h.d.daemon.kernel.agentIdentity.describe(h.d.daemon.kernel.registry.resolve(id).file, id).did;
  const turns: string[] = [];
  let backup: { status: number; body: any } | undefined;
  let before = 0;
  let after = 0;
  // Chats at 5 per second; the backup is asked for between the third and the fourth.
  for (let i = 0; i < 8; i++) {
    turns.push((await h.d.request('POST', `/agents/${id}/chat`, { text: `message ${i}` })).body.turnId);
    if (i === 3) {
      before = (await h.d.request('GET', `/agents/${id}/status`)).body.loopCount;
      backup = await h.d.request('POST', `/agents/${id}/backup`, {});
      after = (await h.d.request('GET', `/agents/${id}/status`)).body.loopCount;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  for (const turn of turns) await h.ended(turn);
  t.equal(backup!.status, 200, JSON.stringify(backup!.body));
  const copy = backup!.body;
  t.equal(copy.agentId, id);
  t.ok(copy.path.startsWith(join(h.d.daemon.kernel.dataDir, 'backups', id)), 'default folder: <data dir>/backups/<agent id>');
  t.equal(copy.sha256, createHash('sha256').update(readFileSync(copy.path)).digest('hex'), 'sha256 of the file');
  t.equal(copy.bytes, readFileSync(copy.path).length);
  t.equal(statSync(copy.path).mode & 0o777, 0o600, 'written 0600');
  t.ok(copy.schemaVersion >= 7);
  t.ok(h.of('backup.completed', id).some((e) => e.payload.path === copy.path && e.payload.scheduled === false), 'backup.completed');

  t.equal((await h.d.request('POST', `/agents/${id}/stop`)).status, 200);
  const live = loopRows(agentPath);
  const restoredPath = join(dir, 'restored.agt');
  const restored = await h.d.request('POST', '/agents/restore', { from: copy.path, to: restoredPath });
  t.equal(restored.status, 200, JSON.stringify(restored.body));
  t.equal(restored.body.agentId, id, 'the same agent id');
  t.equal(restored.body.did, did, 'the same DID');
  const rows = loopRows(restoredPath);
  t.ok(rows.length >= before && rows.length <= after, `a consistent snapshot: ${before} <= ${rows.length} rows <= ${after}`);
  t.same(rows, live.slice(0, rows.length), "the copy's history is the live history up to the backup");
  const restoredFile = h.d.daemon.kernel.registry.resolve(id).file;
  t.equal(restoredFile.raw.one<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check, 'ok', 'integrity ok');
  const status = (await h.d.request('GET', `/agents/${id}/status`)).body;
  t.equal(status.storage.tables.agt_loop, rows.length, 'rows per table in GET /agents/{id}/status');
  t.equal(status.storage.tables.agt_lease, 1, 'the copy carried no lease: only this load holds one');
  t.ok(status.storage.fileBytes > 0);
});

t.test('restore never overwrites: a loaded agent\'s file, an existing file; backups stay out of the sandbox folder', async (t) => {
  const id = await h.agent();
  const agent = h.d.daemon.kernel.registry.resolve(id);
  const copy = (await h.d.request('POST', `/agents/${id}/backup`, { path: dir })).body;
  t.equal(copy.path.startsWith(dir), true, 'an owner-chosen folder');
  const onLoaded = await h.d.request('POST', '/agents/restore', { from: copy.path, to: agent.filePath });
  t.equal(onLoaded.status, 409);
  t.equal(onLoaded.body.code, 'restore_target_loaded');
  writeFileSync(join(dir, 'taken.agt'), 'x');
  const onFile = await h.d.request('POST', '/agents/restore', { from: copy.path, to: join(dir, 'taken.agt') });
  t.equal(onFile.body.code, 'restore_target_exists');
  t.equal(readFileSync(join(dir, 'taken.agt'), 'utf8'), 'x', 'untouched');
  const sameId = await h.d.request('POST', '/agents/restore', { from: copy.path, to: join(dir, 'twin.agt') });
  t.equal(sameId.status, 409);
  t.equal(sameId.body.code, 'agent_already_loaded', 'the same agent is loaded: asNew or stop it first');
  t.notOk(existsSync(join(dir, 'twin.agt')), 'nothing left behind');
  const again = await h.d.request('POST', `/agents/${id}/backup`, { path: copy.path });
  t.equal(again.body.code, 'conflict', 'a backup never overwrites');
  t.ok(h.of('backup.failed', id).some((e) => e.payload.code === 'conflict' && e.payload.scheduled === false), 'backup.failed names the code');
  t.equal((await h.d.request('POST', '/agents/restore', { from: dir, to: join(dir, 'from-a-folder.agt') })).status, 400, 'a folder is no backup');
  const sandbox = join(h.d.daemon.kernel.dataDir, 'sandbox', 'work', 'agent-x');
  mkdirSync(sandbox, { recursive: true });
  const refused = await h.d.request('POST', `/agents/${id}/backup`, { path: sandbox });
  t.equal(refused.status, 403);
  t.equal(refused.body.code, 'backup_path_refused');
  t.same(readdirSync(sandbox), []);
  const broken = join(dir, 'broken.agt');
  writeFileSync(broken, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(5000, 7)]));
  const invalid = await h.d.request('POST', '/agents/restore', { from: broken, to: join(dir, 'broken-restored.agt') });
  t.equal(invalid.status, 422);
  t.equal(invalid.body.code, 'backup_invalid');
});

t.test('a sealed backup: unreadable without the owner identity, restored once it is unlocked (as a new agent)', async (t) => {
  const id = await h.agent();
  const chat = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'remember the word heliotrope' })).body.turnId;
  await h.ended(chat);
  const sealed = await h.d.request('POST', `/agents/${id}/backup`, { seal: true });
  t.equal(sealed.status, 200, JSON.stringify(sealed.body));
  t.match(sealed.body.path, /\.agt\.sealed$/);
  const bytes = readFileSync(sealed.body.path);
  t.equal(bytes.subarray(0, SEALED_MAGIC.length).toString('latin1'), SEALED_MAGIC);
  t.equal(bytes.includes(Buffer.from('SQLite format 3')), false, 'no SQLite page in the clear');
  t.equal(bytes.includes(Buffer.from('heliotrope')), false, 'no conversation in the clear');
  t.same(readdirSync(dirname(sealed.body.path)).filter((name) => name.endsWith('.partial')), [], 'no clear copy was left beside it');

  t.equal((await h.d.request('POST', '/identity/lock')).status, 200);
  const locked = await h.d.request('POST', '/agents/restore', { from: sealed.body.path, to: join(dir, 'sealed-1.agt'), asNew: true });
  t.equal(locked.status, 409);
  t.equal(locked.body.code, 'identity_not_ready');
  const lockedSame = await h.d.request('POST', '/agents/restore', { from: sealed.body.path, to: join(dir, 'sealed-2.agt') });
  t.equal(lockedSame.body.code, 'identity_not_ready', 'unsealing needs the unlocked owner');
  t.notOk(existsSync(join(dir, 'sealed-2.agt')));

  // Another owner's copy: the header names a different owner.
  const text = bytes.toString('latin1');
  const headerEnd = text.indexOf('\n', SEALED_MAGIC.length);
  const header = JSON.parse(text.slice(SEALED_MAGIC.length, headerEnd));
  header.ownerDid = 'did:key:z6MkotherOwnerXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
  const foreign = join(dir, 'foreign.agt.sealed');
  writeFileSync(foreign, Buffer.concat([Buffer.from(SEALED_MAGIC + JSON.stringify(header) + '\n', 'latin1'), bytes.subarray(headerEnd + 1)]));

  t.equal((await h.d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE })).status, 200);
  const other = await h.d.request('POST', '/agents/restore', { from: foreign, to: join(dir, 'sealed-3.agt') });
  t.equal(other.status, 403);
  t.equal(other.body.code, 'backup_sealed_to_another_owner');
  // Cut short (the last frame gone) or altered: the frames no longer authenticate.
  const cut = join(dir, 'cut.agt.sealed');
  writeFileSync(cut, bytes.subarray(0, bytes.length - 100));
  const cutShort = await h.d.request('POST', '/agents/restore', { from: cut, to: join(dir, 'sealed-cut.agt') });
  t.equal(cutShort.status, 422);
  t.match(cutShort.body, { code: 'backup_invalid', reason: 'damaged' });
  const altered = Buffer.from(bytes);
  altered[altered.length - 5] ^= 1;
  writeFileSync(join(dir, 'altered.agt.sealed'), altered);
  t.match((await h.d.request('POST', '/agents/restore', { from: join(dir, 'altered.agt.sealed'), to: join(dir, 'sealed-alt.agt') })).body, { code: 'backup_invalid', reason: 'damaged' });
  t.notOk(existsSync(join(dir, 'sealed-cut.agt')) || existsSync(join(dir, 'sealed-alt.agt')), 'nothing restored from a damaged copy');
  const restored = await h.d.request('POST', '/agents/restore', { from: sealed.body.path, to: join(dir, 'sealed-4.agt'), asNew: true });
  t.equal(restored.status, 200, JSON.stringify(restored.body));
  t.not(restored.body.agentId, id, 'a new agent id');
  const original = h.d.daemon.kernel.agentIdentity.describe(h.d.daemon.kernel.registry.resolve(id).file, id);
  t.not(restored.body.did, original.did, 'a fresh DID');
  t.ok(restored.body.sealed);
  const copyRows = h.d.daemon.kernel.registry.resolve(restored.body.agentId).file.loop.list('main');
  t.ok(copyRows.some((row) => JSON.stringify(row.content).includes('heliotrope')), 'the history came along');
});

t.test('retention deletes old rows; the file shrinks after the checkpoint; the WAL is truncated when idle', async (t) => {
  const old = Date.now() - 10 * 86_400_000;
  const id = await h.agent({}, {});
  const agent = h.d.daemon.kernel.registry.resolve(id);
  agent.file.transaction(() => {
    for (let i = 0; i < 3000; i++) agent.file.raw.run('INSERT INTO agt_logs (level, origin, message, created_at) VALUES (?, ?, ?, ?)', 'info', 'test', 'x'.repeat(400), old);
  });
  for (let i = 0; i < 5; i++) agent.file.logs.write({ level: 'info', origin: 'test', message: `recent ${i}` });
  const maintenance = h.d.daemon.kernel.storage.maintenance;
  maintenance.runPass();
  const before = (await h.d.request('GET', `/agents/${id}/status`)).body.storage;
  t.ok(before.tables.agt_logs >= 3005);
  t.equal((await h.d.request('PATCH', '/settings', { storage: { retention: { logs: { maxAgeDays: 1 } } } })).status, 200);
  const report = maintenance.runPass().find((r) => r.agentId === id)!;
  t.ok(report.deleted >= 3000, `${report.deleted} rows deleted`);
  t.equal(report.checkpoint, 'truncate', 'idle: a truncating checkpoint');
  const after = (await h.d.request('GET', `/agents/${id}/status`)).body.storage;
  t.ok(after.tables.agt_logs < 50 && after.tables.agt_logs >= 5, `old rows gone, recent ones kept (${after.tables.agt_logs})`);
  t.ok(after.fileBytes < before.fileBytes / 2, `the file shrank: ${before.fileBytes} -> ${after.fileBytes} bytes`);
  t.equal(after.walBytes, 0, 'the WAL was truncated');
  t.equal((await h.d.request('PATCH', '/settings', { storage: { retention: { logs: { maxRows: 2 } } } })).status, 200);
  maintenance.runPass();
  t.equal(agent.file.logs.count(), 2, 'maxRows keeps the newest rows');

  // The in-memory replay window of an agent that records one.
  const recorded = await h.agent({ umbilical: { log: { enabled: true } } } as never);
  for (let i = 0; i < 3; i++) await h.ended((await h.d.request('POST', `/agents/${recorded}/chat`, { text: `hi ${i}` })).body.turnId);
  const window = async () => (await h.d.request('GET', `/agents/${recorded}/umbilical/events`)).body.events.length as number;
  t.ok((await window()) > 3);
  t.equal((await h.d.request('PATCH', '/settings', { storage: { retention: { umbilical: { maxRows: 3 } } } })).status, 200);
  maintenance.runPass();
  t.equal(await window(), 3, 'retention.umbilical keeps the newest events of the window');
  await h.d.request('PATCH', '/settings', { storage: null });
});

t.test("the quota stops the agent's own inserts and files with a tool error; the daemon's writes go on", async (t) => {
  const id = await h.agent({ tools: [{ name: 'db_execute', enabled: true }, { name: 'fs_write', enabled: true }] });
  const agent = h.d.daemon.kernel.registry.resolve(id);
  const size = (await h.d.request('GET', `/agents/${id}/status`)).body.storage.fileBytes;
  const quota = size + 128 * 1024;
  t.equal((await h.d.request('PATCH', '/settings', { storage: { agentQuotas: { [id]: quota } } })).status, 200);
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.storage.quotaBytes, quota);
  const insert = { name: 'db_execute', args: { sql: 'INSERT INTO local_blobs (b) VALUES (randomblob(60000))' } };
  h.model.push(
    { toolCalls: [{ name: 'db_execute', args: { sql: 'CREATE TABLE local_blobs (b BLOB)' } }, insert, insert, insert, insert] },
    { toolCalls: [{ name: 'fs_write', args: { path: 'big.txt', content: 'y'.repeat(200 * 1024) } }] },
    { text: 'the quota held' },
  );
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'fill your storage' })).body.turnId;
  const end = await h.ended(turn);
  t.equal(end.event_type, 'turn.completed', 'the turn (the daemon writing its conversation) completed');
  const results = h.model.calls.flatMap((call) => call.messages).filter((m) => m.role === 'tool') as Array<{ content: string; isError?: boolean }>;
  const refused = results.filter((r) => r.isError && /storage quota/.test(r.content));
  t.ok(refused.length >= 2, `inserts and the file write refused by the quota: ${results.map((r) => r.content.slice(0, 80)).join(' | ')}`);
  t.ok(results.some((r) => !r.isError && /"changes": 1/.test(r.content)), 'inserts below the quota went through');
  // The file on disk itself (the status's sizes may be up to 1 s old: docs/backups.md).
  const fileBytes = statSync(agent.file.path).size;
  t.ok(fileBytes <= quota + 64 * 1024, `the file stayed near its quota (${fileBytes} of ${quota})`);
  t.equal(agent.file.files.read('big.txt'), undefined, 'the file was not written');
  // The daemon's own writes: its conversation (the final answer) and an owner write after the refusals.
  t.ok(agent.file.loop.list('main').some((row) => JSON.stringify(row.content).includes('the quota held')));
  for (let i = 0; i < 50; i++) agent.file.logs.write({ level: 'info', origin: 'test', message: 'z'.repeat(4000) });
  t.equal((await h.d.request('PUT', `/agents/${id}/meta/after`, { value: 'written' })).status, 200);
  await h.d.request('PATCH', '/settings', { storage: null });
});

t.test('a Letta Agent File (.af) made by hand imports, and the agent exports back to one', async (t) => {
  const af = {
    agents: [
      {
        id: 'agent-0',
        name: 'Letta Guest',
        description: 'came from Letta',
        system: 'You are a careful research assistant.',
        agent_type: 'letta_v1_agent',
        llm_config: { model: 'gpt-4o-mini', model_endpoint_type: 'openai', context_window: 32000 },
        block_ids: ['block-0', 'block-1'],
        tool_ids: ['tool-0', 'tool-1'],
        tool_rules: [],
        messages: [
          { id: 'message-0', role: 'system', content: [{ type: 'text', text: 'compiled system prompt' }], created_at: '2025-11-21T03:05:34+00:00' },
          { id: 'message-1', role: 'user', content: [{ type: 'text', text: 'hello from Letta' }], created_at: '2025-11-21T03:06:00+00:00' },
          { id: 'message-2', role: 'assistant', content: [{ type: 'text', text: 'hi, I remember you' }], created_at: '2025-11-21T03:06:01+00:00' },
          { id: 'message-3', role: 'tool', content: [{ type: 'text', text: '{"status": "OK"}' }], tool_call_id: 'call-1' },
        ],
        in_context_message_ids: ['message-0', 'message-1', 'message-2'],
      },
    ],
    blocks: [
      { id: 'block-0', label: 'human', value: 'Name: Chad', limit: 5000, description: 'about the user', read_only: false },
      { id: 'block-1', label: 'persona', value: 'I am Sam.', limit: 5000, description: 'who I am', read_only: true },
    ],
    tools: [
      { id: 'tool-0', name: 'conversation_search', tool_type: 'letta_core', source_code: null, json_schema: { name: 'conversation_search', parameters: { type: 'object', properties: {} } } },
      { id: 'tool-1', name: 'fs_read', tool_type: 'custom', source_code: 'def fs_read(): pass', json_schema: { name: 'fs_read', parameters: { type: 'object', properties: {} } } },
    ],
    groups: [],
    files: [],
    sources: [],
    mcp_servers: [],
  };
  const path = join(dir, 'guest.af');
  writeFileSync(path, JSON.stringify(af));
  const imported = await h.d.request('POST', '/agents/import', { from: path, directory: join(dir, 'agents') });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  t.equal(imported.body.name, 'Letta Guest');
  t.same(imported.body.imported, { blocks: 2, messages: 2, tools: ['fs_read'], toolsNotMapped: ['conversation_search'] });
  t.same(imported.body.skipped, { 'messages:system': 1, 'messages:tool': 1 });
  const agent = h.d.daemon.kernel.registry.resolve(imported.body.agentId);
  t.equal(agent.fileConfig.instructions, 'You are a careful research assistant.');
  t.equal(agent.fileConfig.description, 'came from Letta');
  t.equal(agent.fileConfig.model.model_id, 'gpt-4o-mini');
  t.ok(agent.fileConfig.tools.some((tool) => tool.name === 'fs_read' && tool.enabled));
  t.equal(agent.file.files.read('memory/human.md')?.content.toString(), 'Name: Chad');
  t.equal(agent.file.files.info('memory/persona.md')?.protection, 'readonly', 'read_only blocks stay read-only');
  t.same(agent.file.loop.list('main').map((row) => [row.role, (row.content as { text: string }).text]), [['user', 'hello from Letta'], ['assistant', 'hi, I remember you']]);
  t.equal(agent.file.loop.list('main')[0]!.created_at, Date.parse('2025-11-21T03:06:00+00:00'));

  const exported = await h.d.request('GET', `/agents/${imported.body.agentId}/export?format=af`);
  t.equal(exported.status, 200, JSON.stringify(exported.body));
  const doc = exported.body;
  t.equal(doc.agents[0].name, 'Letta Guest');
  t.equal(doc.agents[0].system, 'You are a careful research assistant.');
  t.same(doc.blocks.map((b: { label: string; value: string; limit: number; read_only: boolean }) => [b.label, b.value, b.limit, b.read_only]), [['human', 'Name: Chad', 5000, false], ['persona', 'I am Sam.', 5000, true]]);
  t.same(doc.agents[0].messages.map((m: { role: string; content: Array<{ text: string }> }) => [m.role, m.content[0]!.text]), [['user', 'hello from Letta'], ['assistant', 'hi, I remember you']]);
  t.ok(doc.tools.some((tool: { name: string }) => tool.name === 'fs_read'));
  const bad = join(dir, 'bad.af');
  writeFileSync(bad, JSON.stringify({ agents: [{ description: 'no name' }] }));
  t.equal((await h.d.request('POST', '/agents/import', { from: bad })).status, 400);
});

t.test('agt backup, agt restore --as-new and the backups line of agt status', async (t) => {
  const id = await h.agent({ name: 'cli-subject' });
  const backup = await agt('--json', 'backup', 'cli-subject', '--to', dir);
  t.equal(backup.code, 0, backup.stderr);
  const copy = JSON.parse(backup.stdout);
  t.equal(copy.agentId, id);
  t.ok(existsSync(copy.path));
  const restored = await agt('--json', 'restore', copy.path, '--to', join(dir, 'cli-copy.agt'), '--as-new');
  t.equal(restored.code, 0, restored.stderr);
  t.not(JSON.parse(restored.stdout).agentId, id);
  const refused = await agt('restore', copy.path, '--to', join(dir, 'cli-copy.agt'));
  t.equal(refused.code, 1, 'a refusal exits 1');
  t.match(refused.stderr, /restore_target_loaded|never overwrites/);
  const status = await agt('status');
  t.match(status.stdout, /backups\s+not scheduled/);
});

t.test('a backup worker still running at shutdown is ended (the final shutdown step)', async (t) => {
  const path = await createAgentFile(join(dir, 'agents'), {});
  const job = runSqliteJob({ op: 'copy', src: path, dst: join(dir, 'ended-copy.agt') });
  await endSqliteJobs();
  // Ended at once, before its thread could copy anything (without the step the copy would finish).
  const outcome = await job.then(() => 'finished', (error: { sqliteCode?: string }) => error.sqliteCode);
  t.equal(outcome, 'WORKER_EXIT', 'the job was ended');
  t.equal(sqliteJobsRunning(), 0, 'no SQLite worker left');
  t.notOk(existsSync(join(dir, 'ended-copy.agt')), 'nothing copied');
});
