/**
 * Backups, restore and bounded growth (docs/backups.md), against one built daemon (the shipped
 * extensions): a backup taken while chats write restores to the same history; a sealed backup needs the
 * unlocked owner identity; a restore never overwrites a loaded agent's file; the schedule keeps N copies
 * of loaded agents and of a tracked folder's files; the quota stops the agent's own inserts and files
 * while the daemon's writes go on; the scheduled backup runs on demand and the backups folder's files are
 * listed (never a link) and restore. Retention and the SQLite worker at shutdown are in
 * backups-internals.test.ts, Letta `.af` in backups-letta.test.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import t from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { SEALED_MAGIC } from '../kernel/storage/seal.js';
import { createAgentFile } from './helpers/agent-file.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

const PASSPHRASE = 'owner passphrase';

/** Main's loop rows of an agent file, read from the file (read-only). */
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

let h: WireDaemon;
let dir: string;
/** The file an agent was loaded from. */
const filePathOf = async (id: string) => (await h.d.request('GET', `/agents/${id}`)).body.filePath as string;
const didOf = async (id: string) => (await h.d.request('GET', `/agents/${id}/identity`)).body.did as string;
/** Main's loop rows of a loaded agent (oldest first). */
const loop = async (id: string) =>
  (await h.d.request('GET', `/agents/${id}/loop?limit=500`)).body.rows as Array<{
    role: string;
    content: any;
    created_at: number;
  }>;
const loaded = async (id: string) =>
  ((await h.d.request('GET', '/agents')).body as Array<{ id: string }>).some((agent) => agent.id === id);

t.before(async () => {
  h = await wireDaemon(t);
  dir = h.dir;
  mkdirSync(join(dir, 'agents'));
  await h.d.request('PATCH', '/settings', { agentsFolder: join(dir, 'agents') });
  t.equal((await h.d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).status, 201);
});

// First: with one agent loaded, each scheduled run copies one file.
t.test('scheduled backups keep the newest N per agent, loaded and tracked', async (t) => {
  const id = await h.agent();
  // A tracked agent file that is not loaded: the tracked-folders extension lists it.
  mkdirSync(join(dir, 'tracked'));
  const trackedId = `agt-tracked-${Date.now()}`;
  await createAgentFile(join(dir, 'tracked'), { id: trackedId, name: 'tracked-one' });
  t.equal((await h.d.request('POST', '/tracked-folders', { path: join(dir, 'tracked') })).status, 201);
  const backups = join(dir, 'scheduled');
  // Every second (cron with seconds): the first copy comes from the real timer.
  t.equal(
    (await h.d.request('PATCH', '/settings', { backups: { every: '* * * * * *', keep: 2, dir: backups } })).status,
    200,
  );
  const first = await h.waitFor(
    (e) => e.event_type === 'backup.completed' && e.agent_id === id && (e.payload as { scheduled: boolean }).scheduled,
    'a scheduled backup',
  );
  t.ok((first.payload as { path: string }).path.startsWith(join(backups, id)));
  // Then the timer's runs until one removed an older copy of each, the schedule off, the last run out.
  const pruned = (agentId: string) => (e: { event_type: string; agent_id: string | null; payload: any }) =>
    e.event_type === 'backup.completed' &&
    e.agent_id === agentId &&
    e.payload.scheduled &&
    e.payload.removed.length > 0;
  await h.waitFor(pruned(id), 'a scheduled run that removed a copy');
  await h.waitFor(pruned(trackedId), 'a scheduled run that removed a copy of the tracked file');
  const status = (await h.d.request('GET', '/backups')).body;
  t.equal(status.enabled, true);
  t.equal(status.keep, 2);
  t.ok(status.lastRun.completed >= 1);
  t.equal((await h.d.request('PATCH', '/settings', { backups: null })).status, 200);
  for (let i = 0; (await h.d.request('GET', '/backups')).body.running; i++) {
    if (i > 200) throw new Error('failsafe: a scheduled run still going after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal((await h.d.request('GET', '/backups')).body.enabled, false);
  // The copies, not a copy's temporary `.partial` file.
  const copiesOf = (agentId: string) => readdirSync(join(backups, agentId)).filter((name) => !name.startsWith('.'));
  t.equal(copiesOf(id).length, 2, `keep: 2 (${readdirSync(join(backups, id)).join(', ')})`);
  t.equal(
    copiesOf(trackedId).length,
    2,
    `the tracked file that is not loaded is copied too (${readdirSync(join(backups, trackedId)).join(', ')})`,
  );
  t.equal(await loaded(trackedId), false, 'without loading it');
  const byName = await h.d.request('POST', '/agents/tracked-one/backup', { path: dir });
  t.equal(byName.status, 200, 'POST /agents/{id}/backup finds a tracked file that is not loaded');
  t.equal(byName.body.agentId, trackedId);
  t.equal(await loaded(trackedId), false, 'and copies it without loading it');
  t.equal((await h.d.request('POST', '/agents/nobody-at-all/backup', {})).status, 404);
  const events = h.of('backup.completed', id).filter((e) => e.payload.scheduled);
  t.ok(
    events.some((e) => e.payload.removed.length > 0),
    'a run names the copies it removed',
  );
  const bad = await h.d.request('PATCH', '/settings', { backups: { every: 'not a cron' } });
  t.equal(bad.status, 400, 'a bad cron expression is refused');
});

t.test('a backup taken while 5 chats per second write restores to the same history (same id and DID)', async (t) => {
  const id = await h.agent();
  const agentPath = await filePathOf(id);
  const did = await didOf(id);
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
  t.ok(copy.path.startsWith(join(h.d.dataDir, 'backups', id)), 'default folder: <data dir>/backups/<agent id>');
  t.equal(copy.sha256, createHash('sha256').update(readFileSync(copy.path)).digest('hex'), 'sha256 of the file');
  t.equal(copy.bytes, readFileSync(copy.path).length);
  t.equal(statSync(copy.path).mode & 0o777, 0o600, 'written 0600');
  t.ok(copy.schemaVersion >= 7);
  // The event may reach GET /events after the answer: waited for, not looked up.
  await h.waitFor(
    (e) =>
      e.event_type === 'backup.completed' &&
      e.agent_id === id &&
      (e.payload as any).path === copy.path &&
      (e.payload as any).scheduled === false,
    'backup.completed',
  );

  t.equal((await h.d.request('POST', `/agents/${id}/stop`)).status, 200);
  const live = loopRows(agentPath);
  const restoredPath = join(dir, 'restored.agt');
  const restored = await h.d.request('POST', '/agents/restore', { from: copy.path, to: restoredPath });
  t.equal(restored.status, 200, JSON.stringify(restored.body));
  t.equal(restored.body.agentId, id, 'the same agent id');
  t.equal(restored.body.did, did, 'the same DID');
  const rows = loopRows(restoredPath);
  t.ok(
    rows.length >= before && rows.length <= after,
    `a consistent snapshot: ${before} <= ${rows.length} rows <= ${after}`,
  );
  t.same(rows, live.slice(0, rows.length), "the copy's history is the live history up to the backup");
  t.equal(await filePathOf(id), restoredPath, 'the restored copy is loaded');
  const restoredFile = AgentFile.open(restoredPath, { readonly: true });
  try {
    t.equal(
      restoredFile.raw.one<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check,
      'ok',
      'integrity ok',
    );
  } finally {
    void restoredFile.close();
  }
  const status = (await h.d.request('GET', `/agents/${id}/status`)).body;
  t.equal(status.storage.tables.agt_loop, rows.length, 'rows per table in GET /agents/{id}/status');
  t.equal(status.storage.tables.agt_lease, 1, 'the copy carried no lease: only this load holds one');
  t.ok(status.storage.fileBytes > 0);
});

t.test(
  "restore never overwrites: a loaded agent's file, an existing file; backups stay out of the sandbox folder",
  async (t) => {
    const id = await h.agent();
    const filePath = await filePathOf(id);
    const copy = (await h.d.request('POST', `/agents/${id}/backup`, { path: dir })).body;
    t.equal(copy.path.startsWith(dir), true, 'an owner-chosen folder');
    const onLoaded = await h.d.request('POST', '/agents/restore', { from: copy.path, to: filePath });
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
    await h.waitFor(
      (e) =>
        e.event_type === 'backup.failed' &&
        e.agent_id === id &&
        (e.payload as any).code === 'conflict' &&
        (e.payload as any).scheduled === false,
      'backup.failed naming the code',
    );
    t.equal(
      (await h.d.request('POST', '/agents/restore', { from: dir, to: join(dir, 'from-a-folder.agt') })).status,
      400,
      'a folder is no backup',
    );
    const sandbox = join(h.d.dataDir, 'sandbox', 'work', 'agent-x');
    mkdirSync(sandbox, { recursive: true });
    const refused = await h.d.request('POST', `/agents/${id}/backup`, { path: sandbox });
    t.equal(refused.status, 403);
    t.equal(refused.body.code, 'backup_path_refused');
    t.same(readdirSync(sandbox), []);
    const broken = join(dir, 'broken.agt');
    writeFileSync(broken, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(5000, 7)]));
    const invalid = await h.d.request('POST', '/agents/restore', {
      from: broken,
      to: join(dir, 'broken-restored.agt'),
    });
    t.equal(invalid.status, 422);
    t.equal(invalid.body.code, 'backup_invalid');
  },
);

t.test(
  'a sealed backup: unreadable without the owner identity, restored once it is unlocked (as a new agent)',
  async (t) => {
    const id = await h.agent();
    const chat = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'remember the word heliotrope' })).body
      .turnId;
    await h.ended(chat);
    const sealed = await h.d.request('POST', `/agents/${id}/backup`, { seal: true });
    t.equal(sealed.status, 200, JSON.stringify(sealed.body));
    t.match(sealed.body.path, /\.agt\.sealed$/);
    const bytes = readFileSync(sealed.body.path);
    t.equal(bytes.subarray(0, SEALED_MAGIC.length).toString('latin1'), SEALED_MAGIC);
    t.equal(bytes.includes(Buffer.from('SQLite format 3')), false, 'no SQLite page in the clear');
    t.equal(bytes.includes(Buffer.from('heliotrope')), false, 'no conversation in the clear');
    t.same(
      readdirSync(dirname(sealed.body.path)).filter((name) => name.endsWith('.partial')),
      [],
      'no clear copy was left beside it',
    );

    t.equal((await h.d.request('POST', '/identity/lock')).status, 200);
    const locked = await h.d.request('POST', '/agents/restore', {
      from: sealed.body.path,
      to: join(dir, 'sealed-1.agt'),
      asNew: true,
    });
    t.equal(locked.status, 409);
    t.equal(locked.body.code, 'identity_not_ready');
    const lockedSame = await h.d.request('POST', '/agents/restore', {
      from: sealed.body.path,
      to: join(dir, 'sealed-2.agt'),
    });
    t.equal(lockedSame.body.code, 'identity_not_ready', 'unsealing needs the unlocked owner');
    t.notOk(existsSync(join(dir, 'sealed-2.agt')));

    // Another owner's copy: the header names a different owner.
    const text = bytes.toString('latin1');
    const headerEnd = text.indexOf('\n', SEALED_MAGIC.length);
    const header = JSON.parse(text.slice(SEALED_MAGIC.length, headerEnd));
    header.ownerDid = 'did:key:z6MkotherOwnerXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
    const foreign = join(dir, 'foreign.agt.sealed');
    writeFileSync(
      foreign,
      Buffer.concat([
        Buffer.from(`${SEALED_MAGIC + JSON.stringify(header)}\n`, 'latin1'),
        bytes.subarray(headerEnd + 1),
      ]),
    );

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
    t.match(
      (
        await h.d.request('POST', '/agents/restore', {
          from: join(dir, 'altered.agt.sealed'),
          to: join(dir, 'sealed-alt.agt'),
        })
      ).body,
      { code: 'backup_invalid', reason: 'damaged' },
    );
    t.notOk(
      existsSync(join(dir, 'sealed-cut.agt')) || existsSync(join(dir, 'sealed-alt.agt')),
      'nothing restored from a damaged copy',
    );
    const restored = await h.d.request('POST', '/agents/restore', {
      from: sealed.body.path,
      to: join(dir, 'sealed-4.agt'),
      asNew: true,
    });
    t.equal(restored.status, 200, JSON.stringify(restored.body));
    t.not(restored.body.agentId, id, 'a new agent id');
    t.not(restored.body.did, await didOf(id), 'a fresh DID');
    t.ok(restored.body.sealed);
    const copyRows = await loop(restored.body.agentId);
    t.ok(
      copyRows.some((row) => JSON.stringify(row.content).includes('heliotrope')),
      'the history came along',
    );
  },
);

t.test("the quota stops the agent's own inserts and files with a tool error; the daemon's writes go on", async (t) => {
  const id = await h.agent({
    tools: [
      { name: 'db_execute', enabled: true },
      { name: 'fs_write', enabled: true },
    ],
  });
  const filePath = await filePathOf(id);
  const size = (await h.d.request('GET', `/agents/${id}/status`)).body.storage.fileBytes;
  const quota = size + 128 * 1024;
  t.equal((await h.d.request('PATCH', '/settings', { storage: { agentQuotas: { [id]: quota } } })).status, 200);
  t.equal((await h.d.request('GET', `/agents/${id}/status`)).body.storage.quotaBytes, quota);
  const insert = { name: 'db_execute', args: { sql: 'INSERT INTO local_blobs (b) VALUES (randomblob(60000))' } };
  h.model.push(
    {
      toolCalls: [
        { name: 'db_execute', args: { sql: 'CREATE TABLE local_blobs (b BLOB)' } },
        insert,
        insert,
        insert,
        insert,
      ],
    },
    { toolCalls: [{ name: 'fs_write', args: { path: 'big.txt', content: 'y'.repeat(200 * 1024) } }] },
    { text: 'the quota held' },
  );
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'fill your storage' })).body.turnId;
  const end = await h.ended(turn);
  t.equal(end.event_type, 'turn.completed', 'the turn (the daemon writing its conversation) completed');
  const results = h.model.calls.flatMap((call) => call.messages).filter((m) => m.role === 'tool') as Array<{
    content: string;
    isError?: boolean;
  }>;
  const refused = results.filter((r) => r.isError && /storage quota/.test(r.content));
  t.ok(
    refused.length >= 2,
    `inserts and the file write refused by the quota: ${results.map((r) => r.content.slice(0, 80)).join(' | ')}`,
  );
  t.ok(
    results.some((r) => !r.isError && /"changes": 1/.test(r.content)),
    'inserts below the quota went through',
  );
  // The file on disk itself (the status's sizes may be up to 1 s old: docs/backups.md).
  const fileBytes = statSync(filePath).size;
  t.ok(fileBytes <= quota + 64 * 1024, `the file stayed near its quota (${fileBytes} of ${quota})`);
  t.equal(
    (await h.d.request('GET', `/agents/${id}/files/content?path=big.txt`)).status,
    404,
    'the file was not written',
  );
  // The daemon's own writes: its conversation (the final answer), another turn and an owner write after the refusals.
  t.ok((await loop(id)).some((row) => JSON.stringify(row.content).includes('the quota held')));
  h.model.push({ text: 'still talking' });
  t.equal(
    (await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'still there?' })).body.turnId)).event_type,
    'turn.completed',
  );
  t.ok(
    (await loop(id)).some((row) => JSON.stringify(row.content).includes('still talking')),
    'a turn after the quota is written',
  );
  t.equal((await h.d.request('PUT', `/agents/${id}/meta/after`, { value: 'written' })).status, 200);
  await h.d.request('PATCH', '/settings', { storage: null });
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

  // One rule for --to of both: a path ending in / (or an existing folder) is a folder, made when its
  // parent exists; another path is the file; a missing parent is refused, naming it.
  // (By id: the --as-new copy above shares the name.)
  const intoNew = await agt('--json', 'backup', id, '--to', `${join(dir, 'new-folder')}/`);
  t.equal(intoNew.code, 0, intoNew.stderr);
  const inFolder = JSON.parse(intoNew.stdout).path;
  t.equal(dirname(inFolder), join(dir, 'new-folder'), 'the folder was made and the copy named in it');
  t.ok(statSync(join(dir, 'new-folder')).isDirectory());
  const deep = await agt('backup', id, '--to', `${join(dir, 'no', 'such')}/`);
  t.equal(deep.code, 1);
  t.match(deep.stderr, /the folder of .*no\/such\/ does not exist: make it first/);
  const deepFile = await agt('backup', id, '--to', join(dir, 'no', 'such.agt'));
  t.match(deepFile.stderr, /the folder of .*no\/such\.agt does not exist/);
  t.notOk(existsSync(join(dir, 'no')), 'nothing made for a missing parent');
  const restoreInto = await agt(
    '--json',
    'restore',
    inFolder,
    '--to',
    `${join(dir, 'restored-here')}/`,
    '--as-new',
    '--name',
    'Copy of cli-subject',
  );
  t.equal(restoreInto.code, 0, restoreInto.stderr);
  t.match(
    JSON.parse(restoreInto.stdout),
    { name: 'Copy of cli-subject', asNew: true, filePath: join(dir, 'restored-here', basename(inFolder)) },
    'restore --to a folder keeps the file name; --name names the copy',
  );
  const restoreDeep = await agt('restore', inFolder, '--to', `${join(dir, 'no', 'such')}/`, '--as-new');
  t.match(restoreDeep.stderr, /the folder of .*no\/such\/ does not exist/, 'the same refusal as backup');
  const sameAgent = await agt('restore', inFolder, '--to', join(dir, 'twin-cli.agt'));
  t.match(sameAgent.stderr, /agt restore --as-new/, 'the refusal names the flag the CLI has');
  t.equal((await agt('restore', inFolder, '--name', 'x')).code, 2, '--name takes --as-new');

  const status = await agt('status');
  t.match(status.stdout, /backups\s+not scheduled/);
});

t.test('POST /backups/run, GET /backups/files and a restore from the list; agt backups [run]', async (t) => {
  const id = await h.agent({ name: 'listed-subject' });
  const root = join(dir, 'listed');
  t.equal(
    (await h.d.request('PATCH', '/settings', { backups: { every: '0 3 * * *', keep: 3, dir: root, seal: true } }))
      .status,
    200,
  );
  t.teardown(() => h.d.request('PATCH', '/settings', { backups: null }));
  const run = await h.d.request('POST', '/backups/run', {});
  t.equal(run.status, 200);
  t.ok(run.body.completed >= 1 && run.body.finishedAt, 'the run ended before the answer');
  t.same((await h.d.request('GET', '/backups')).body.lastRun, run.body, "it is the schedule's last run");
  const plain = await h.d.request('POST', `/agents/${id}/backup`, { path: `${join(root, id)}/` });
  t.equal(plain.status, 200);
  // Never listed: a link (to a file outside the folder), a linked agent folder, a file of another kind.
  const outside = join(dir, 'outside.agt');
  writeFileSync(outside, 'x');
  symlinkSync(outside, join(root, id, `${id}-link.agt`));
  symlinkSync(join(root, id), join(root, 'linked-folder'));
  writeFileSync(join(root, id, 'notes.txt'), 'x');

  const listed = await h.d.request('GET', '/backups/files');
  t.equal(listed.status, 200);
  t.equal(listed.body.dir, root);
  const mine = listed.body.files.filter((file: any) => file.agentId === id);
  t.equal(mine.length, 2, 'the scheduled copy and the one made by hand');
  t.match(
    mine.find((file: any) => file.path === plain.body.path),
    { sealed: false, bytes: plain.body.bytes },
  );
  t.match(
    mine.find((file: any) => file.path !== plain.body.path),
    { sealed: true, name: /\.agt\.sealed$/ },
    'sealed, read from the file',
  );
  for (const file of listed.body.files) {
    t.equal(dirname(file.path), join(root, file.agentId), 'only <dir>/<agent id>/<file>');
    t.notOk(file.name.includes('link') || file.name === 'notes.txt', 'no link, no other file');
  }
  const times = listed.body.files.map((file: any) => file.modifiedAt);
  t.same(times, [...times].sort().reverse(), 'newest first');

  const restored = await h.d.request('POST', '/agents/restore', {
    from: mine[0].path,
    to: `${join(dir, 'from-list')}/`,
    asNew: true,
  });
  t.equal(restored.status, 200, 'a listed path restores');

  const cli = await agt('--json', 'backups');
  t.equal(cli.code, 0, cli.stderr);
  t.same(
    JSON.parse(cli.stdout).files.map((file: any) => file.path),
    listed.body.files.map((file: any) => file.path),
  );
  const human = await agt('backups');
  t.match(human.stdout, new RegExp(`${id}.*yes`), 'a table with the sealed column');
  const cliRun = await agt('--json', 'backups', 'run');
  t.equal(cliRun.code, 0, cliRun.stderr);
  t.ok(JSON.parse(cliRun.stdout).completed >= 1);
});
