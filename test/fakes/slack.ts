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
  /**
   * Sends an `interactive` envelope (a `block_actions` payload): member `user` pressed the button
   * `actionId` with `value` on message `ts` in `channel`. Returns the envelope id (acknowledged into `acks`).
   */
  press(user: string, channel: string, ts: string, actionId: string, value: string): string;
  /** `chat.postEphemeral` calls. */
  ephemeral: Array<Record<string, string>>;
  /** `chat.update` calls. */
  updates: Array<Record<string, string>>;
}

export async function startFakeSlack(
  t: Teardown,
  botToken = 'xoxb-test-bot',
  appToken = 'xapp-test-app',
): Promise<FakeSlack> {
  const posted: Array<Record<string, string>> = [];
  const ephemeral: Array<Record<string, string>> = [];
  const updates: Array<Record<string, string>> = [];
  /** As Slack: a message posted to a member id goes to the app's direct-message channel with them. */
  const dmOf = (channel: string) => (/^[UW][A-Z0-9]+$/.test(channel) ? `D${channel.slice(1)}` : channel);
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
          {
            const messageTs = `${ts++}.000200`;
            posted.push({ ...params, ts: messageTs, posted_channel: dmOf(params.channel!) });
            return json(res, 200, {
              ok: true,
              channel: dmOf(params.channel!),
              ts: messageTs,
              message: { text: params.text },
            });
          }
        case 'chat.update': {
          const original = posted.find(
            (message) => message.posted_channel === params.channel && message.ts === params.ts,
          );
          if (!original) return json(res, 200, { ok: false, error: 'message_not_found' });
          updates.push(params);
          return json(res, 200, { ok: true, channel: params.channel, ts: params.ts, text: params.text });
        }
        case 'chat.postEphemeral':
          ephemeral.push(params);
          return json(res, 200, { ok: true, message_ts: `${ts++}.000300` });
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
    ephemeral,
    updates,
    press(user, channel, messageTs, actionId, value) {
      const id = `env-${++envelope}`;
      const original = posted.find((message) => message.ts === messageTs);
      const frame = {
        envelope_id: id,
        type: 'interactive',
        accepts_response_payload: true,
        payload: {
          type: 'block_actions',
          user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: 'T1' },
          api_app_id: 'A1',
          token: 'verification',
          container: { type: 'message', message_ts: messageTs, channel_id: channel, is_ephemeral: false },
          trigger_id: `trigger-${envelope}`,
          team: { id: 'T1', domain: 'fake' },
          enterprise: null,
          is_enterprise_install: false,
          channel: { id: channel, name: 'directmessage' },
          message: { type: 'message', ts: messageTs, text: original?.text ?? '', user: SLACK_BOT_USER },
          state: { values: {} },
          response_url: `${origin}/response/${envelope}`,
          actions: [
            {
              type: 'button',
              action_id: actionId,
              block_id: 'b1',
              value,
              text: { type: 'plain_text', text: actionId },
              action_ts: `${Math.floor(Date.now() / 1000)}.000400`,
            },
          ],
        },
      };
      for (const socket of server.sockets()) socket.send(JSON.stringify(frame));
      return id;
    },
  };
}
