/**
 * Tools that fail stay inside the turn: a throwing tool and a hung one, contributed in process (no
 * shipped tool throws or hangs on demand), next to a call to a tool that does not exist.
 */
import t from 'tap';
import { runtimeHarness, type RuntimeHarness } from './fixtures/runtime/harness.js';

/** The tool results the model saw on its last call, by tool name. */
function lastToolResults(h: RuntimeHarness): Array<{ name: string; content: string; isError?: boolean }> {
  const messages = h.model.calls.at(-1)!.messages;
  return messages.filter((m) => m.role === 'tool') as never;
}

t.test('tool failures stay inside the turn: a throwing tool and a hung tool', async (t) => {
  const h = await runtimeHarness(t, { wire: true });
  h.d.daemon.kernel.contributions.forExtension('test-tools').tools({
    toolsFor: () => [
      {
        name: 'explode',
        description: 'throws',
        inputSchema: { type: 'object' },
        source: 'ext:test',
        run: async () => {
          throw new Error('tool blew up');
        },
      },
      {
        name: 'hang',
        description: 'never returns',
        inputSchema: { type: 'object' },
        source: 'ext:test',
        run: () => new Promise(() => {}),
      },
    ],
  });
  const id = await h.agent({ limits: { tool_timeout_ms: 200 } });
  h.model.push({ toolCalls: [{ name: 'explode' }, { name: 'hang' }, { name: 'no_such_tool' }] }, { text: 'recovered' });
  const turn = (await h.d.request('POST', `/agents/${id}/chat`, { text: 'go' })).body.turnId;
  const end = await h.ended(turn);
  t.equal(end.event_type, 'turn.completed');
  t.match(end.payload, { text: 'recovered', tool_calls: 3 });
  const results = lastToolResults(h);
  t.match(results[0]!.content, /tool blew up/);
  t.match(results[1]!.content, /exceeded its time limit of 200 ms/);
  t.match(results[2]!.content, /Unknown or disabled tool/);
  t.ok(results.every((r) => r.isError));
  const completed = h.of('tool.completed', id).map((e) => e.payload.ok);
  t.same(completed, [false, false, false]);
  const logs = (await h.d.request('GET', `/agents/${id}/logs`)).body.logs.map((l: any) => l.message).join('\n');
  t.match(logs, /tool explode failed/);
  t.match(logs, /tool hang failed \(timeout\)/);
});
