/**
 * A fake Discord: REST (`/api/v10/gateway/bot`, `POST /api/v10/channels/{id}/messages`, attachment files)
 * and the gateway WebSocket speaking JSON frames (HELLO, IDENTIFY, READY with one guild and its
 * GUILD_CREATE, heartbeat ACKs, MESSAGE_CREATE dispatches). The whole server can go away and come back.
 */
import type { WebSocket } from 'ws';
import { json, startRestartable, type RestartableServer } from './restartable.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const DISCORD_BOT = {
  id: '900000000000000001',
  username: 'agt',
  discriminator: '0',
  global_name: null,
  avatar: null,
  bot: true,
};
export const GUILD_ID = '800000000000000001';
export const GUILD_CHANNEL = '810000000000000001';

export interface FakeDiscord extends RestartableServer {
  api: string;
  token: string;
  posted: Array<{ channel: string; body: any }>;
  identified: number;
  /** Dispatches MESSAGE_CREATE to every identified session; returns the message id. */
  inject(message: Record<string, unknown>): string;
  addFile(content: Buffer, name: string, declaredSize?: number): Record<string, unknown>;
  rateLimitNext(seconds: number): void;
  sessions(): number;
  /** Dispatches INTERACTION_CREATE: user `userId` pressed the button `customId` under message `messageId`. */
  press(userId: string, channelId: string, messageId: string, customId: string): string;
  /** Interaction responses (`POST /interactions/{id}/{token}/callback`), by interaction id. */
  interactionReplies: Array<{ interaction: string; body: any }>;
  /** Message edits (`PATCH /channels/{id}/messages/{id}`). */
  edits: Array<{ channel: string; message: string; body: any }>;
  /** Direct-message channels opened (`POST /users/@me/channels`): recipient id to channel id. */
  dms: Map<string, string>;
}

export async function startFakeDiscord(t: Teardown, token = 'fake-discord-token'): Promise<FakeDiscord> {
  const posted: FakeDiscord['posted'] = [];
  const interactionReplies: FakeDiscord['interactionReplies'] = [];
  const edits: FakeDiscord['edits'] = [];
  const dms = new Map<string, string>();
  /** Interaction id to its token: a callback must name both, and answers once. */
  const interactions = new Map<string, string>();
  const messageIds = new Map<string, string>();
  const files = new Map<string, Buffer>();
  const sessions = new Map<WebSocket, { seq: number }>();
  let nextId = 1_000_000_000_000_000_000n;
  let rateLimit = 0;
  let origin = '';
  const state = { identified: 0 };
  const id = () => String(nextId++);

  const dispatch = (socket: WebSocket, t: string, d: unknown) => {
    const session = sessions.get(socket);
    if (!session) return;
    socket.send(JSON.stringify({ op: 0, t, s: ++session.seq, d }));
  };

  const server = await startRestartable(t, {
    http(req, res, body) {
      const url = new URL(req.url ?? '/', 'http://fake');
      const file = /^\/attachments\/(.+)$/.exec(url.pathname);
      if (file) {
        const content = files.get(file[1]!);
        if (!content) return json(res, 404, { message: 'Unknown' });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return void res.end(content);
      }
      // Interaction callbacks are authenticated by the interaction's token in the path, not the bot token.
      const callback = /^\/api\/v10\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(url.pathname);
      if (req.method === 'POST' && callback) {
        if (interactions.get(callback[1]!) !== callback[2])
          return json(res, 404, { message: 'Unknown interaction', code: 10062 });
        interactions.delete(callback[1]!);
        interactionReplies.push({ interaction: callback[1]!, body: JSON.parse(body.toString('utf8')) });
        res.writeHead(204);
        return void res.end();
      }
      if (req.headers.authorization !== `Bot ${token}`)
        return json(res, 401, { message: '401: Unauthorized', code: 0 });
      if (req.method === 'GET' && url.pathname === '/api/v10/gateway/bot') {
        return json(res, 200, {
          url: `${origin.replace('http', 'ws')}/gateway`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        });
      }
      if (req.method === 'POST' && url.pathname === '/api/v10/users/@me/channels') {
        const recipient = String(JSON.parse(body.toString('utf8')).recipient_id);
        if (!/^\d+$/.test(recipient)) return json(res, 400, { message: 'Invalid Form Body', code: 50035 });
        if (!dms.has(recipient)) dms.set(recipient, id());
        return json(res, 200, {
          id: dms.get(recipient),
          type: 1,
          last_message_id: null,
          flags: 0,
          recipients: [
            { id: recipient, username: `user${recipient}`, discriminator: '0', global_name: null, avatar: null },
          ],
        });
      }
      const edit = /^\/api\/v10\/channels\/(\d+)\/messages\/(\d+)$/.exec(url.pathname);
      if (req.method === 'PATCH' && edit) {
        if (messageIds.get(edit[2]!) !== edit[1]) return json(res, 404, { message: 'Unknown Message', code: 10008 });
        const parsed = JSON.parse(body.toString('utf8'));
        edits.push({ channel: edit[1]!, message: edit[2]!, body: parsed });
        return json(res, 200, {
          id: edit[2],
          channel_id: edit[1],
          content: parsed.content,
          author: DISCORD_BOT,
          timestamp: new Date().toISOString(),
          edited_timestamp: new Date().toISOString(),
          type: 0,
          attachments: [],
          embeds: [],
          components: parsed.components ?? [],
          mentions: [],
          mention_roles: [],
          pinned: false,
          tts: false,
          mention_everyone: false,
        });
      }
      const post = /^\/api\/v10\/channels\/(\d+)\/messages$/.exec(url.pathname);
      if (req.method === 'POST' && post) {
        if (rateLimit > 0) {
          const seconds = rateLimit;
          rateLimit = 0;
          return json(
            res,
            429,
            { message: 'You are being rate limited.', retry_after: seconds, global: false },
            { 'retry-after': String(seconds), 'x-ratelimit-scope': 'user' },
          );
        }
        const parsed = JSON.parse(body.toString('utf8'));
        const messageId = id();
        messageIds.set(messageId, post[1]!);
        posted.push({ channel: post[1]!, body: { ...parsed, id: messageId } });
        return json(res, 200, {
          id: messageId,
          channel_id: post[1],
          content: parsed.content,
          author: DISCORD_BOT,
          timestamp: new Date().toISOString(),
          type: 0,
          attachments: [],
          embeds: [],
          mentions: [],
          mention_roles: [],
          pinned: false,
          tts: false,
          mention_everyone: false,
          edited_timestamp: null,
        });
      }
      return json(res, 404, { message: '404: Not Found', code: 0 });
    },
    onSocket(socket) {
      socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null }));
      socket.on('close', () => sessions.delete(socket));
      socket.on('message', (raw) => {
        const frame = JSON.parse(String(raw)) as { op: number; d: any };
        if (frame.op === 1) socket.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
        else if (frame.op === 6) socket.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
        else if (frame.op === 2) {
          if (frame.d?.token !== token) return socket.close(4004, 'Authentication failed');
          sessions.set(socket, { seq: 0 });
          state.identified++;
          dispatch(socket, 'READY', {
            v: 10,
            user: DISCORD_BOT,
            guilds: [{ id: GUILD_ID, unavailable: true }],
            session_id: `session-${state.identified}`,
            resume_gateway_url: `${origin.replace('http', 'ws')}/gateway`,
            application: { id: '700000000000000001', flags: 0 },
          });
          dispatch(socket, 'GUILD_CREATE', {
            id: GUILD_ID,
            name: 'Fake guild',
            unavailable: false,
            owner_id: '600000000000000001',
            joined_at: new Date().toISOString(),
            large: false,
            member_count: 2,
            features: [],
            roles: [],
            emojis: [],
            stickers: [],
            members: [],
            presences: [],
            voice_states: [],
            threads: [],
            stage_instances: [],
            guild_scheduled_events: [],
            channels: [
              {
                id: GUILD_CHANNEL,
                type: 0,
                name: 'general',
                guild_id: GUILD_ID,
                position: 0,
                permission_overwrites: [],
              },
            ],
          });
        }
      });
    },
  });
  origin = server.origin;
  return {
    ...server,
    api: `${server.origin}/api`,
    token,
    posted,
    get identified() {
      return state.identified;
    },
    inject(message) {
      const messageId = id();
      const data = {
        id: messageId,
        type: 0,
        content: '',
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        ...message,
      };
      for (const socket of sessions.keys()) dispatch(socket, 'MESSAGE_CREATE', data);
      return messageId;
    },
    addFile(content, name, declaredSize) {
      const fileId = id();
      files.set(fileId, content);
      return {
        id: fileId,
        filename: name,
        size: declaredSize ?? content.byteLength,
        url: `${server.origin}/attachments/${fileId}`,
        proxy_url: `${server.origin}/attachments/${fileId}`,
        content_type: 'application/octet-stream',
      };
    },
    rateLimitNext(seconds) {
      rateLimit = seconds;
    },
    sessions: () => sessions.size,
    interactionReplies,
    edits,
    dms,
    press(userId, channelId, messageId, customId) {
      const interactionId = id();
      const interactionToken = `itoken-${interactionId}`;
      interactions.set(interactionId, interactionToken);
      const original = posted.find((message) => message.body.id === messageId);
      const user = { id: userId, username: `user${userId}`, discriminator: '0', global_name: null, avatar: null };
      const data = {
        id: interactionId,
        application_id: '700000000000000001',
        type: 3,
        data: { custom_id: customId, component_type: 2 },
        channel_id: channelId,
        channel: { id: channelId, type: 1, last_message_id: messageId, flags: 0, recipients: [user] },
        user,
        token: interactionToken,
        version: 1,
        app_permissions: '0',
        locale: 'en-US',
        entitlements: [],
        authorizing_integration_owners: { '1': userId },
        context: 1,
        attachment_size_limit: 10_485_760,
        message: {
          id: messageId,
          channel_id: channelId,
          author: DISCORD_BOT,
          content: original?.body.content ?? '',
          timestamp: new Date().toISOString(),
          edited_timestamp: null,
          tts: false,
          mention_everyone: false,
          mentions: [],
          mention_roles: [],
          attachments: [],
          embeds: [],
          components: original?.body.components ?? [],
          pinned: false,
          type: 0,
          flags: 0,
        },
      };
      for (const socket of sessions.keys()) dispatch(socket, 'INTERACTION_CREATE', data);
      return interactionId;
    },
  };
}
