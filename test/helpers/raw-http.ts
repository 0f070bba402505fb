/** Raw HTTP requests for tests that must control headers fetch() will not let us set (Host, Origin). */
import { request as httpRequest } from 'node:http';

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
  const { connect } = await import('node:net');
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
