/** Raw HTTP requests for tests that must control headers fetch() will not let us set (Host, Origin). */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export function rawRequest(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers ?? {},
        setHost: !options.headers || !Object.keys(options.headers).some((h) => h.toLowerCase() === 'host'),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // keep text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/**
 * Sends `text` as it is on a fresh connection (request lines fetch and http.request will not write, such
 * as the absolute form) and parses the answer once the server closes (send `Connection: close`).
 */
export async function rawLine(url: string, text: string): Promise<RawResponse & { raw: string }> {
  const target = new URL(url);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const bodyText = split < 0 ? '' : raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: unknown = bodyText;
  try {
    body = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    // chunked or not JSON: keep the text
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), headers, body, raw };
}

export interface RawExchange {
  socket: Socket;
  /** Everything received so far. */
  received: () => string;
  /** Resolves with everything received once the server closed the connection, and how long that took. */
  closed: Promise<{ text: string; ms: number }>;
}

/** A connection to `url`'s server for a test to write to as it likes (half-sent requests, idle sockets). */
export function rawConnect(url: string): Promise<RawExchange> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(target.port), target.hostname, () => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (text += chunk));
      const closed = new Promise<{ text: string; ms: number }>((done) =>
        socket.once('close', () => done({ text, ms: Date.now() - started })),
      );
      socket.on('error', () => {});
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}

/** Status line and parsed JSON body of a raw HTTP answer. */
export function parseAnswer(text: string): { status: number; body: any; headers: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = body;
  }
  return { status, body: parsed, headers: head.toLowerCase() };
}
