/**
 * A loopback HTTP server for fake vendor APIs: parses JSON bodies, records every request (with arrival
 * time and whether the client hung up early) and hands it to a route handler. `t.teardown` destroys
 * every open connection (stalled replies included) and closes the server.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RecordedRequest } from './script.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export type Handler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface FakeServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeServer(t: Teardown, handler: Handler): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const url = new URL(req.url ?? '/', 'http://fake');
      let finish!: () => void;
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        at: Date.now(),
        clientAborted: false,
        done: new Promise<void>((done) => (finish = done)),
        raw: req,
      };
      requests.push(recorded);
      res.on('finish', finish);
      res.on('close', () => {
        if (!res.writableFinished) recorded.clientAborted = true;
        finish();
      });
      Promise.resolve(handler(recorded, res)).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `fake handler failed: ${String(error)}` } }));
        } else res.destroy();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    }));
  t.teardown(close);
  return { origin: `http://127.0.0.1:${port}`, requests, close };
}

/** Writes one JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Starts an SSE answer. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

/** True while the client is still there (a write after it left is skipped). */
export const open = (res: ServerResponse) => !res.destroyed && !res.writableEnded;
