/** A local HTTP server that counts its hits, and one turn of `sys_fetch` calls: the fetch tests' shared parts. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DaemonClient } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function hitServer(
  t: Teardown,
  handler: Parameters<typeof createServer>[1],
): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const srv: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler!(req, res);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  return { port: (srv.address() as AddressInfo).port, hits };
}

/** What both runtime harnesses (in process and on the built daemon) offer that one fetch turn needs. */
interface FetchHarness {
  d: DaemonClient;
  model: { push(...steps: any[]): unknown; calls: Array<{ messages: Array<{ role: string; content?: unknown }> }> };
  ended(turnId: string): Promise<unknown>;
}

/** Runs one turn whose model calls sys_fetch with each args object; the tool results in order. */
export async function fetchAll(h: FetchHarness, id: string, calls: Array<Record<string, unknown>>) {
  h.model.push({ toolCalls: calls.map((args) => ({ name: 'sys_fetch', args })) }, { text: 'done' });
  await h.ended((await h.d.request('POST', `/agents/${id}/chat`, { text: 'fetch' })).body.turnId);
  const messages = h.model.calls.at(-1)!.messages;
  return messages.filter((m) => m.role === 'tool') as Array<{ content: string; isError?: boolean }>;
}
