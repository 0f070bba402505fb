import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import t from 'tap';
import {
  ReviewMarks,
  readReviewMarks,
  REVIEW_MARKS_FILE,
  REVIEW_MARKS_JOURNAL,
} from '../kernel/agents/review-marks.js';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';

const risky = {
  name: 'risky',
  autostart: true,
  icon: 'R',
  tools: [
    { name: 'say', enabled: true },
    { name: 'sys_fetch', enabled: true },
    { name: 'compute_exec', enabled: false },
  ],
  triggers: {
    on_timer: {
      enabled: true,
      targets: [{ scope: 'system' as const, lambda: 'jobs/tick.ts:run' }, { scope: 'agent' as const }],
    },
  },
  mcp: {
    servers: [
      { name: 'web', transport: 'http' as const, url: 'https://mcp.example/mcp' },
      { name: 'fs', transport: 'stdio' as const, command: 'npx', args: ['srv'] },
    ],
  },
  security: { compute_tier: 'isolated' },
  messaging: { mode: 'proactive' as const },
};

/** One daemon for the file (each test writes files of its own); the installation test starts a second. */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t));

t.test('review info, accept, and the requireReview gate', async (t) => {
  const d = await daemon();
  const path = await createAgentFile(tempDir(t), risky);
  const before = statSync(path).mtimeMs;

  const info = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`);
  t.equal(info.status, 200);
  t.equal(info.body.filePath, path);
  t.equal(info.body.reviewed, false);
  const s = info.body.summary;
  t.same([s.name, s.icon, s.autostart, s.computeTier, s.codeExecution], ['risky', 'R', true, 'isolated', true]);
  t.same(s.tools, [
    { name: 'say', enabled: true, notable: false },
    { name: 'sys_fetch', enabled: true, notable: true },
    { name: 'compute_exec', enabled: false, notable: true },
  ]);
  t.same(s.triggers, [{ type: 'on_timer', enabled: true, targetCount: 2 }]);
  t.same(
    s.mcpServers.map((m: { name: string }) => m.name),
    ['web', 'fs'],
  );
  t.equal(s.messaging.mode, 'proactive');
  t.equal(s.network.fetch, true);
  t.same(s.network.mcpHttp, ['https://mcp.example/mcp']);
  t.same(s.identity, { agentDid: null, fileOwnerDid: null, ownerIsYou: false, scenario: 'unclaimed' });
  t.same(s.security, { compute_tier: 'isolated' });
  t.equal(statSync(path).mtimeMs, before, 'reviewing does not write the file');
  t.notOk(existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0, 'no write-ahead log content from the review');

  const gated = await d.request('POST', '/agents/load', { filePath: path, requireReview: true });
  t.equal(gated.status, 403);
  t.same(gated.body, {
    error: gated.body.error,
    code: 'AGENT_REVIEW_REQUIRED',
    agentId: info.body.agentId,
    filePath: path,
  });
  t.same((await d.request('GET', '/agents')).body, []);

  const accepted = await d.request('POST', '/agents/review/accept', { filePath: path });
  t.same([accepted.status, accepted.body.reviewed, accepted.body.agentId], [200, true, info.body.agentId]);
  t.equal((await d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`)).body.reviewed, true);
  const { marks } = readReviewMarks(join(d.dataDir, REVIEW_MARKS_FILE), join(d.dataDir, REVIEW_MARKS_JOURNAL));
  t.ok(marks[info.body.agentId], 'the mark lives in the data directory, keyed by agent id');
  t.equal(statSync(join(d.dataDir, REVIEW_MARKS_JOURNAL)).mode & 0o777, 0o600, 'appended to the journal, owner only');

  const load = await d.request('POST', '/agents/load', { filePath: path, requireReview: true });
  t.equal(load.status, 200);
  t.equal(
    (await d.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`)).body.reviewed,
    true,
    'review of a loaded file',
  );

  t.equal((await d.request('GET', '/agents/review')).status, 400, 'filePath required');
  t.equal((await d.request('GET', '/agents/review?filePath=relative.agt')).status, 400);
  t.equal(
    (await d.request('GET', `/agents/review?filePath=${encodeURIComponent(join(d.dataDir, 'none.agt'))}`)).status,
    404,
  );
  t.equal((await d.request('POST', '/agents/review/accept', {})).status, 400);
});

t.test('marks follow changes made through the daemon, not edits made elsewhere', async (t) => {
  const d = await daemon();
  const path = await createAgentFile(tempDir(t), { name: 'marked' });
  const q = `/agents/review?filePath=${encodeURIComponent(path)}`;
  await d.request('POST', '/agents/review/accept', { filePath: path });
  const { body: ref } = await d.request('POST', '/agents/load', { filePath: path, requireReview: true });

  // A security-relevant change through the config PUT keeps the file reviewed.
  const next = { ...ref.config, tools: [{ name: 'sys_fetch', enabled: true }], autonomous: true };
  t.equal((await d.request('PUT', `/agents/${ref.id}/config`, next)).status, 200);
  t.equal((await d.request('GET', q)).body.reviewed, true, "kept across the daemon's own config change");
  await d.request('POST', `/agents/${ref.id}/unload`);
  t.equal((await d.request('POST', '/agents/load', { filePath: path, requireReview: true })).status, 200);
  await d.request('POST', `/agents/${ref.id}/unload`);

  // An edit made outside the daemon invalidates it.
  const db = new Database(path, { timeout: 5000 });
  const row = db.prepare("SELECT value FROM agt_config WHERE key = 'config'").get() as { value: string };
  const edited = { ...JSON.parse(row.value), tools: [{ name: 'compute_exec', enabled: true }] };
  db.prepare("UPDATE agt_config SET value = ? WHERE key = 'config'").run(JSON.stringify(edited));
  db.close();
  t.equal((await d.request('GET', q)).body.reviewed, false, 'edited elsewhere: review again');
  const gated = await d.request('POST', '/agents/load', { filePath: path, requireReview: true });
  t.same([gated.status, gated.body.code], [403, 'AGENT_REVIEW_REQUIRED']);
  t.equal((await d.request('POST', '/agents/load', { filePath: path })).status, 200, 'direct loads bypass the gate');

  // A cosmetic change made elsewhere does not need a new review.
  const other = await createAgentFile(tempDir(t), { name: 'cosmetic' });
  await d.request('POST', '/agents/review/accept', { filePath: other });
  const db2 = new Database(other, { timeout: 5000 });
  const row2 = db2.prepare("SELECT value FROM agt_config WHERE key = 'config'").get() as { value: string };
  db2
    .prepare("UPDATE agt_config SET value = ? WHERE key = 'config'")
    .run(JSON.stringify({ ...JSON.parse(row2.value), description: 'new words' }));
  db2.close();
  t.equal((await d.request('GET', `/agents/review?filePath=${encodeURIComponent(other)}`)).body.reviewed, true);
});

t.test('a mark from another installation does not count here', async (t) => {
  const dir = tempDir(t);
  const path = await createAgentFile(dir, { name: 'traveller' });
  const a = await daemon();
  t.equal((await a.request('POST', '/agents/review/accept', { filePath: path })).body.reviewed, true);
  const b = await runDaemon(t);
  t.equal((await b.request('GET', `/agents/review?filePath=${encodeURIComponent(path)}`)).body.reviewed, false);
});

t.test('review marks: appended to a journal, folded into the file at its size, read back in order', async (t) => {
  const dir = tempDir(t);
  const logger = { warn() {} } as never;
  const file = join(dir, REVIEW_MARKS_FILE);
  const journal = join(dir, REVIEW_MARKS_JOURNAL);
  const config = (i: number, autonomous = false) => ({ id: `agt-${i}`, autonomous }) as never;
  const marks = new ReviewMarks(dir, logger);
  for (let i = 0; i < 63; i++) marks.accept(config(i), `/a/${i}.agt`);
  t.notOk(existsSync(file), 'the first marks only append');
  t.equal(readFileSync(journal, 'utf8').trim().split('\n').length, 63);
  marks.accept(config(63), '/a/63.agt');
  t.notOk(existsSync(journal), 'folded at 64 lines');
  t.equal(Object.keys(JSON.parse(readFileSync(file, 'utf8'))).length, 64);
  t.equal(statSync(file).mode & 0o777, 0o600);
  // A changed mark after the fold wins over the file's; a line cut short by a crash is skipped.
  marks.accept(config(5, true), '/a/5.agt');
  appendFileSync(journal, '{"id":"agt-7","mark":{"fingerp');
  const again = new ReviewMarks(dir, logger);
  t.ok(again.isReviewed(config(5, true)), 'the journal line replaces the folded mark');
  t.notOk(again.isReviewed(config(5)));
  t.ok(again.isReviewed(config(7)), 'the torn line takes nothing away');
  t.ok(again.isReviewed(config(63)));
  t.notOk(again.isReviewed(config(64)));
  // Folding happens again once the journal has as many lines as the file has marks (64, then 128, ...).
  for (let i = 64; i < 125; i++) again.accept(config(i), `/a/${i}.agt`);
  t.ok(existsSync(journal), '2 + 61 lines: not yet');
  again.accept(config(125), '/a/125.agt');
  t.notOk(existsSync(journal), 'folded at 64 lines');
  const { marks: all, journalLines, filed } = readReviewMarks(file, journal);
  t.same([Object.keys(all).length, journalLines, filed], [126, 0, 126]);
  t.ok(new ReviewMarks(dir, logger).isReviewed(config(5, true)), 'the changed mark is in the folded file');
});
