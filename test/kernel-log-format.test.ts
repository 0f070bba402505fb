/**
 * The daemon's own log lines through `agtd`: `--log-format json` writes one JSON object
 * a line to stderr with the data directory, the per-turn line (a failed turn is a warn line with its code)
 * and, at debug, one line per request without its query; `--log-format pretty` writes readable lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { spawnDaemon, tempDir } from './helpers/daemon.js';

async function waitFor(read: () => string, pattern: RegExp, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!pattern.test(read())) {
    if (Date.now() > deadline) throw new Error(`failsafe: no ${what} within 20 s:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('--log-format json at debug: data directory, turn line, request lines', async (t) => {
  const d = await spawnDaemon(t, { env: { AGT_LOG_LEVEL: 'debug' } }, ['--log-format', 'json']);
  const token = readFileSync(join(d.dataDir, 'daemon-token'), 'utf8').trim();
  const call = (method: string, path: string, body?: unknown) =>
    fetch(d.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  t.equal(readFileSync(join(d.dataDir, 'daemon-url'), 'utf8').trim(), d.url, 'the URL is published for agt');
  const path = await createAgentFile(tempDir(t), { name: 'logged' });
  const agent = (await (await call('POST', '/agents/load', { filePath: path })).json()) as { id: string };
  // No providers extension in this manifest: the turn fails with `unavailable`, which is logged too.
  await call('POST', `/agents/${agent.id}/chat?loop=main`, { text: 'hello' });
  await waitFor(d.stderr, /"msg":"turn failed/, 'turn line');
  // The request's line is written once its answer is sent: it may come after the turn's.
  await waitFor(d.stderr, /request answered[^\n]*\/chat|\/chat[^\n]*request answered/, "the chat's request line");
  // Every log line is one JSON object (bin/agtd.mjs may say first that it runs the sources).
  const lines = d
    .stderr()
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('agtd: '))
    .map((line) => JSON.parse(line) as Record<string, any>);
  t.match(
    lines.find((line) => line.msg?.startsWith('data directory')),
    { level: 30, dataDir: d.dataDir },
  );
  t.match(
    lines.find((line) => line.msg?.startsWith('turn failed')),
    {
      level: 40,
      agent: 'logged',
      agentId: agent.id,
      loop: 'main',
      turnId: String,
      end: 'error',
      code: 'unavailable',
      trigger: 'chat',
    },
  );
  const request = lines.find((line) => line.msg === 'request answered' && line.url === `/agents/${agent.id}/chat`);
  // With fastify's request id (the request's child logger).
  t.match(request, { level: 20, method: 'POST', statusCode: 202, ms: Number, reqId: String });
  t.notOk(d.stderr().includes(token), 'the token is never logged');
  d.child.kill('SIGTERM');
  await d.exited;
  t.throws(() => readFileSync(join(d.dataDir, 'daemon-url')), 'the URL file is removed at shutdown');
});

t.test('--log-format pretty', async (t) => {
  const d = await spawnDaemon(t, { env: { AGT_LOG_LEVEL: 'info' } }, ['--log-format', 'pretty']);
  await waitFor(d.stderr, /data directory/, 'start line');
  const line = d
    .stderr()
    .split('\n')
    .find((text) => text.includes('data directory'))!;
  t.match(line, /INFO.*data directory /);
  t.throws(() => JSON.parse(line), 'not JSON');
  const bad = await spawnDaemon(t, {}, ['--log-format', 'fancy']);
  t.equal(await bad.exited, 1);
  t.match(bad.stderr(), /--log-format must be pretty or json/);
});
