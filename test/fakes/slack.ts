/**
 * A fake Slack: the Web API (`POST /api/<method>`, form-encoded or JSON, bearer tokens) with `auth.test`,
 * `apps.connections.open` and `chat.postMessage`, private file downloads, and the socket-mode WebSocket
 * (`hello`, then `events_api` envelopes the client acknowledges). The whole server can go away and come back.
 */
import type { WebSocket } from 'ws';
import { json, startRestartable, type RestartableServer } from './restartable.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const SLACK_BOT_USER = 'UBOT';

export interface FakeSlack extends RestartableServer {
  apiUrl: string;
  botToken: string;
  appToken: string;
  posted: Array<Record<string, string>>;
  acks: string[];
  /** Sends a `message` event to every connected socket; returns its ts. */
  inject(event: Record<string, unknown>): string;
  addFile(content: Buffer, name: string, declaredSize?: number): Record<string, unknown>;
  rateLimitNext(seconds: number): void;
  connected(): number;
}

export async function startFakeSlack(
  t: Teardown,
  botToken = 'xoxb-test-bot',
  appToken = 'xapp-test-app',
): Promise<FakeSlack> {
  const posted: Array<Record<string, string>> = [];
  const acks: string[] = [];
  const files = new Map<string, Buffer>();
  let rateLimit = 0;
  let ts = 1_700_000_000;
  let envelope = 0;
  let origin = '';

  const server = await startRestartable(t, {
    http(req, res, body) {
      const url = new URL(req.url ?? '/', 'http://fake');
      const auth = String(req.headers.authorization ?? '');
      const file = /^\/files\/(.+)$/.exec(url.pathname);
      if (file) {
        const content = files.get(file[1]!);
        if (auth !== `Bearer ${botToken}` || !content) return json(res, 404, { ok: false });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return void res.end(content);
      }
      const match = /^\/api\/([\w.]+)$/.exec(url.pathname);
      if (!match) return json(res, 404, { ok: false, error: 'unknown_method' });
      const text = body.toString('utf8');
      const params: Record<string, string> = String(req.headers['content-type']).includes('json')
        ? JSON.parse(text || '{}')
        : Object.fromEntries(new URLSearchParams(text));
      const method = match[1]!;
      if (method === 'apps.connections.open') {
        if (auth !== `Bearer ${appToken}`) return json(res, 200, { ok: false, error: 'invalid_auth' });
        return json(res, 200, { ok: true, url: `${origin.replace('http', 'ws')}/socket` });
      }
      if (auth !== `Bearer ${botToken}`) return json(res, 200, { ok: false, error: 'invalid_auth' });
      switch (method) {
        case 'auth.test':
          return json(res, 200, {
            ok: true,
            url: 'https://fake.slack.com/',
            team: 'Fake',
            user: 'agt',
            team_id: 'T1',
            user_id: SLACK_BOT_USER,
            bot_id: 'BBOT',
          });
        case 'chat.postMessage':
          if (rateLimit > 0) {
            const seconds = rateLimit;
            rateLimit = 0;
            return json(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(seconds) });
          }
          posted.push(params);
          return json(res, 200, {
            ok: true,
            channel: params.channel,
            ts: `${ts++}.000200`,
            message: { text: params.text },
          });
        default:
          return json(res, 200, { ok: false, error: 'unknown_method' });
      }
    },
    onSocket(socket: WebSocket) {
      socket.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { envelope_id?: string };
        if (frame.envelope_id) acks.push(frame.envelope_id);
      });
      socket.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          debug_info: { host: 'fake', approximate_connection_time: 3600 },
          connection_info: { app_id: 'A1' },
        }),
      );
    },
  });
  origin = server.origin;
  return {
    ...server,
    apiUrl: `${server.origin}/api/`,
    botToken,
    appToken,
    posted,
    acks,
    inject(event) {
      const messageTs = `${ts++}.000100`;
      const frame = {
        envelope_id: `env-${++envelope}`,
        type: 'events_api',
        accepts_response_payload: false,
        retry_attempt: 0,
        retry_reason: '',
        payload: {
          token: 'verification',
          team_id: 'T1',
          api_app_id: 'A1',
          type: 'event_callback',
          event_id: `Ev${envelope}`,
          event_time: Math.floor(Date.now() / 1000),
          authorizations: [{ team_id: 'T1', user_id: SLACK_BOT_USER, is_bot: true }],
          event: { type: 'message', ts: messageTs, event_ts: messageTs, team: 'T1', ...event },
        },
      };
      for (const socket of server.sockets()) socket.send(JSON.stringify(frame));
      return messageTs;
    },
    addFile(content, name, declaredSize) {
      const id = `F${files.size + 1}`;
      files.set(id, content);
      return {
        id,
        name,
        mimetype: 'application/octet-stream',
        size: declaredSize ?? content.byteLength,
        url_private_download: `${server.origin}/files/${id}`,
      };
    },
    rateLimitNext(seconds) {
      rateLimit = seconds;
    },
    connected: () => server.sockets().length,
  };
}
