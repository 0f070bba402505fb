/**
 * A loopback HTTP server (optionally with WebSocket upgrades) that a test can take away and bring back
 * on the same port, to see a client notice the loss and reconnect. `t.teardown` closes it for good.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface RestartableServer {
  origin: string;
  port: number;
  /** Closes every connection and stops listening. */
  goAway(): Promise<void>;
  /** Listens again on the same port. */
  comeBack(): Promise<void>;
  /** Open WebSocket connections (when `onSocket` was given). */
  sockets(): WebSocket[];
}

export interface RestartableOptions {
  http(req: IncomingMessage, res: ServerResponse, body: Buffer): void | Promise<void>;
  onSocket?(socket: WebSocket, req: IncomingMessage): void;
}

export async function startRestartable(t: Teardown, options: RestartableOptions): Promise<RestartableServer> {
  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  const connections = new Set<Socket>();
  let port = 0;

  const listen = async () => {
    const next = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        Promise.resolve(options.http(req, res, Buffer.concat(chunks))).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: false, error: String(error) }));
        });
      });
    });
    next.on('connection', (socket) => {
      connections.add(socket);
      socket.on('close', () => connections.delete(socket));
    });
    if (options.onSocket) {
      const ws = new WebSocketServer({ noServer: true });
      next.on('upgrade', (req, socket, head) =>
        ws.handleUpgrade(req, socket, head, (client) => options.onSocket!(client, req)),
      );
      wss = ws;
    }
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    port = (next.address() as AddressInfo).port;
    server = next;
  };

  const goAway = async () => {
    const current = server;
    server = undefined;
    if (!current) return;
    for (const client of wss?.clients ?? []) client.terminate();
    wss?.close();
    wss = undefined;
    for (const socket of connections) socket.destroy();
    await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  t.teardown(goAway);
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    goAway,
    comeBack: listen,
    sockets: () => [...(wss?.clients ?? [])],
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Resolves once `check` holds (polled every 20 ms), or rejects naming `what` after `ms`. */
export async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
