/**
 * What the A2A tests share: the scripted model behind their agents, and a local webhook that records the push
 * notifications it is sent.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reply } from '../fakes/openai.js';
import { startToolDriver } from './tool-driver.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** `please ask` asks, `please hang` never answers, else it echoes the text. */
export const startA2aModel = (t: Teardown) =>
  startToolDriver(t, (request) => {
    const last = (request.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
    if (last.role === 'tool') return reply.text(`answered: ${String(last.content)}`);
    const content = String(last.content);
    if (content.includes('please ask'))
      return reply.toolCalls([{ id: `ask-${Date.now()}`, name: 'ask', args: { question: 'Which colour?' } }]);
    if (content.includes('please hang')) return reply.stall();
    return reply.text(`echo: ${/"text":"((?:[^"\\]|\\.)*)"/.exec(content)?.[1] ?? content}`);
  });

/** A webhook on `host` that records what it is sent; answers 503 to the first `failFirst` calls. */
export async function webhook(t: Teardown, host: string, failFirst = 0) {
  const calls: Array<{ headers: IncomingHttpHeaders; body: string; status: number }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const status = calls.length < failFirst ? 503 : 200;
      calls.push({ headers: request.headers, body, status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, host, done));
  t.teardown(() => new Promise((done) => server.close(done)));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}/hook`, calls };
}
