/**
 * A local OTLP/HTTP traces receiver for tests: records each export request, decodes `http/json` bodies into
 * flat spans (hex ids, attributes as plain values, the resource's `service.name`), and keeps `http/protobuf`
 * bodies as bytes, and every request's headers. `hang()` makes it accept requests and never answer (a collector that is stuck).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  status: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  protobufBodies: Buffer[];
  /** The headers of each export request, in order. */
  headers: IncomingMessage['headers'][];
  hang(on: boolean): void;
  close(): Promise<void>;
}

function value(v: any): unknown {
  if (!v || typeof v !== 'object') return v;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

const attributes = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

export async function startOtlpReceiver(t: { teardown(fn: () => unknown): void }): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const protobufBodies: Buffer[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const hanging = new Set<ServerResponse>();
  let hang = false;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (hang) return void hanging.add(response);
      headers.push(request.headers);
      const body = Buffer.concat(chunks);
      if (String(request.headers['content-type']).includes('json')) {
        for (const rs of JSON.parse(body.toString('utf8')).resourceSpans ?? []) {
          const service = String(attributes(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                start: BigInt(s.startTimeUnixNano),
                end: BigInt(s.endTimeUnixNano),
                status: s.status?.code ?? 0,
                attributes: attributes(s.attributes),
              });
        }
      } else protobufBodies.push(body);
      response.writeHead(200, { 'content-type': String(request.headers['content-type']) }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    protobufBodies,
    headers,
    hang: (on) => void (hang = on),
    close,
  };
}
