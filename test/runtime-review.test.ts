/**
 * On the built daemon: the review mark follows config changes the agent makes itself through `sys_update_config` (the
 * same path as the owner's PUT config), including security-relevant ones, while owner locks (`locked_fields`) still
 * refuse the tool.
 */
import { join } from 'node:path';
import t from 'tap';
import { readReviewMarks, REVIEW_MARKS_FILE, REVIEW_MARKS_JOURNAL } from '../kernel/agents/review-marks.js';
import { createAgentFile } from './helpers/agent-file.js';
import { wireDaemon } from './helpers/wire-daemon.js';

t.test('sys_update_config keeps a reviewed agent reviewed; a locked field is refused', async (t) => {
  const h = await wireDaemon(t);
  const path = await createAgentFile(h.dir, {
    tools: [{ name: 'sys_update_config', enabled: true }],
    locked_fields: ['messaging'],
  });
  const review = `/agents/review?filePath=${encodeURIComponent(path)}`;
  t.equal((await h.d.request('POST', '/agents/review/accept', { filePath: path })).body.reviewed, true);
  const loaded = await h.d.request('POST', '/agents/load', { filePath: path, requireReview: true });
  t.equal(loaded.status, 200);
  const id = loaded.body.id as string;
  const mark = () =>
    readReviewMarks(join(h.d.dataDir, REVIEW_MARKS_FILE), join(h.d.dataDir, REVIEW_MARKS_JOURNAL)).marks[id];
  const before = mark();

  h.model.push(
    {
      toolCalls: [
        { name: 'sys_update_config', args: { patch: { messaging: { mode: 'proactive' } } } },
        // `autonomous` is security-relevant: the mark's fingerprint must follow the change.
        { name: 'sys_update_config', args: { patch: { autonomous: true, description: 'changed by itself' } } },
      ],
    },
    { text: 'done' },
  );
  const turnId = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'reconfigure yourself' })).body.turnId;
  t.equal((await h.ended(turnId)).event_type, 'turn.completed');

  const results = h.model.calls.at(-1)!.messages.filter((m) => m.role === 'tool') as Array<{
    content: string;
    isError?: boolean;
  }>;
  t.match(results[0], { content: /owner lock: messaging is locked/, isError: true });
  t.match(results[1]!.content, /updated autonomous, description/);
  t.notOk(results[1]!.isError);

  const config = (await h.d.request('GET', `/agents/${id}/config`)).body.config;
  t.match(config, { autonomous: true, description: 'changed by itself', messaging: { mode: 'respond_only' } });
  const info = await h.d.request('GET', review);
  t.equal(info.status, 200);
  t.equal(info.body.reviewed, true, 'the review mark followed the agent’s own change');
  t.not(mark().fingerprint, before.fingerprint, 'the mark was carried to the new security-relevant config');
});
