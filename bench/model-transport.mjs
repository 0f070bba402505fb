// The model call's HTTP transport alone: CPU per call of undici's `request` against
// `node:http` with a keep-alive agent, each in a fresh process (what a daemon's first turns pay: code
// not yet compiled, undici's WebAssembly parser) and then warm. Same body (~11 KB: 20 messages, 25
// tools, as a bench turn sends) and the same server-sent-event answer, from a server in another process.
//
// Run: node bench/model-transport.mjs [pairs=3]
// Result on 27 Nov 2026 (2 cores, load 10–13): first 130 calls undici 1.0–1.8 ms, node:http 0.34–0.67
// ms per call; the next 1,000: 0.40–0.64 against 0.38–0.57 ms.
import { fork } from 'node:child_process';
import http from 'node:http';

if (process.argv[2] === '--server') {
  const chunk = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-model' };
  const body =
    chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }) +
    chunk({ ...base, choices: [{ index: 0, delta: { content: 'ok' } }] }) +
    chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
    chunk({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }) +
    'data: [DONE]\n\n';
  http
    .createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(body.slice(0, 200));
        res.end(body.slice(200));
      });
    })
    .listen(0, '127.0.0.1', function () {
      process.send(this.address().port);
    });
} else if (process.argv[2] === '--client') {
  const [, , , which, port] = process.argv;
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  const payload = JSON.stringify({
    model: 'x',
    messages: Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `hello there ${i}` })),
    tools: Array.from({ length: 25 }, (_, i) => ({
      type: 'function',
      function: { name: `t${i}`, description: 'x'.repeat(300), parameters: { type: 'object' } },
    })),
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer x' };
  let request;
  const viaUndici = async () => {
    request ??= (await import('undici')).request;
    const r = await request(url, { method: 'POST', headers, body: payload, headersTimeout: 0, bodyTimeout: 0 });
    r.body.setEncoding('utf8');
    let s = '';
    r.body.on('data', (c) => (s += c));
    await new Promise((done) => r.body.on('end', done));
    return s.length;
  };
  const agent = new http.Agent({ keepAlive: true });
  const viaHttp = () =>
    new Promise((done, fail) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(payload) } },
        (res) => {
          res.setEncoding('utf8');
          let s = '';
          res.on('data', (c) => (s += c));
          res.on('end', () => done(s.length));
        },
      );
      req.on('error', fail);
      req.end(payload);
    });
  const call = which === 'http' ? viaHttp : viaUndici;
  const cpu = async (n) => {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) await call();
    const used = process.cpuUsage(before);
    return Math.round((used.user + used.system) / n);
  };
  for (let i = 0; i < 3; i++) await call();
  const first = await cpu(130);
  console.log(JSON.stringify({ transport: which, first130UsPerCall: first, next1000UsPerCall: await cpu(1000) }));
} else {
  const server = fork(new URL(import.meta.url), ['--server']);
  const port = await new Promise((done) => server.once('message', done));
  const run = (which) =>
    new Promise((done) => fork(new URL(import.meta.url), ['--client', which, String(port)]).once('exit', done));
  try {
    for (let i = 0; i < (Number(process.argv[2]) || 3); i++) for (const which of ['undici', 'http']) await run(which);
  } finally {
    server.kill();
  }
}
