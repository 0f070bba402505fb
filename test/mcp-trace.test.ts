/**
 * Trace context outbound to MCP servers, black box (docs/observability.md "MCP requests"): with telemetry exporting
 * to a local OTLP receiver, an MCP tool call carries `params._meta.traceparent` whose trace is the turn's and
 * whose parent span is the call's own `execute_tool` span; the server (test/fixtures/mcp/notify-server.mjs)
 * answers with the `_meta` it received.
 */
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { loadWithServers } from './helpers/mcp.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';
import { startToolDriver } from './helpers/tool-driver.js';

const receiver = await startOtlpReceiver(t);
const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  extensions: shippedManifest({ telemetry: { scheduledDelayMillis: 20 } }),
  settings: {
    providers: [driver.provider],
    mcpServers: [
      {
        name: 'traced',
        type: 'command',
        command: process.execPath,
        args: [join(ROOT, 'test/fixtures/mcp/notify-server.mjs')],
      },
    ],
    telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json' },
  },
});
const events = await eventLog(t, d);
const agentId = await loadWithServers(d, tempDir(t, 'agt-mcp-trace-'), driver.model, ['traced']);

t.test("an MCP request carries the call's traceparent in _meta, in the turn's trace", async (t) => {
  const meta = JSON.parse(await driver.run(d, agentId, 'mcp_traced_meta', {}));
  t.match(meta.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  t.notOk('tracestate' in meta, 'no tracestate: the tracer keeps none');
  t.ok('progressToken' in meta, "beside the SDK's own progressToken");
  const [, traceId, spanId] = (meta.traceparent as string).split('-');
  const started = await events.waitFor(
    (e) => e.event_type === 'tool.started' && (e.payload as { tool: string }).tool === 'mcp_traced_meta',
    'the call',
  );
  const until = Date.now() + 15_000;
  let turn = receiver.spans.find((s) => s.attributes['agt.turn.id'] === started.turn_id);
  let call = receiver.spans.find((s) => s.name === 'execute_tool mcp_traced_meta');
  while (!turn || !call) {
    if (Date.now() > until) throw new Error('failsafe: the spans were not exported');
    await new Promise((done) => setTimeout(done, 20));
    turn = receiver.spans.find((s) => s.attributes['agt.turn.id'] === started.turn_id);
    call = receiver.spans.find((s) => s.name === 'execute_tool mcp_traced_meta');
  }
  t.equal(traceId, turn.traceId, "the turn's trace");
  t.equal(spanId, call.spanId, "the call's own span");
  t.equal(call.traceId, turn.traceId);
  t.equal(call.attributes['gen_ai.tool.type'], 'extension', "an MCP server's tool is an extension (GenAI conventions)");
});
