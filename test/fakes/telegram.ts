/**
 * A fake Telegram Bot API (`POST /bot<token>/<method>` with JSON, `GET /file/bot<token>/<path>`) for
 * grammy's `apiRoot`: long polls held open until an update arrives, `sendMessage` recorded, files served,
 * a scripted rate limit, and the whole server able to go away and come back.
 */
import type { ServerResponse } from 'node:http';
import { json, startRestartable, type RestartableServer } from './restartable.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const BOT = { id: 999_000, is_bot: true, first_name: 'Agt', username: 'agt_test_bot' };

export interface SentMessage {
  chat_id: number | string;
  text: string;
  reply_parameters?: { message_id: number };
  message_thread_id?: number;
  reply_markup?: { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> };
  /** The message id the fake gave it. */
  message_id: number;
}

export interface FakeTelegram extends RestartableServer {
  apiRoot: string;
  token: string;
  sent: SentMessage[];
  /** Method names in arrival order. */
  calls: string[];
  /** Queues an update with this message (update_id and message_id filled in); returns the message id. */
  inject(message: Record<string, unknown>): number;
  /** Serves `content` as a file; returns its file_id. */
  addFile(content: Buffer, declaredSize?: number): string;
  /** The next `sendMessage` answers 429 with `retry_after` seconds. */
  rateLimitNext(seconds: number): void;
  /** Queues a `callback_query` update: user `from` pressed the button with `data` under message `messageId`. */
  press(from: number, messageId: number, data: string): string;
  /** `answerCallbackQuery` calls in arrival order. */
  callbackAnswers: Array<{ callback_query_id: string; text?: string; show_alert?: boolean }>;
  /** `editMessageText` calls in arrival order. */
  edits: Array<{ chat_id: number | string; message_id: number; text: string; reply_markup?: unknown }>;
}

export async function startFakeTelegram(t: Teardown, token = '123456:TEST-token'): Promise<FakeTelegram> {
  const updates: Array<{ update_id: number } & Record<string, unknown>> = [];
  const callbackAnswers: FakeTelegram['callbackAnswers'] = [];
  const edits: FakeTelegram['edits'] = [];
  let nextQuery = 1;
  const waiting = new Set<() => void>();
  const files = new Map<string, { content: Buffer; size: number }>();
  const sent: SentMessage[] = [];
  const calls: string[] = [];
  let nextUpdate = 1;
  let nextMessage = 100;
  let rateLimit = 0;

  const ok = (res: ServerResponse, result: unknown) => json(res, 200, { ok: true, result });
  const server = await startRestartable(t, {
    async http(req, res, body) {
      const url = new URL(req.url ?? '/', 'http://fake');
      const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (file) {
        const stored = file[1] === token ? files.get(file[2]!) : undefined;
        if (!stored) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return void res.end(stored.content);
      }
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
      if (!match) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      if (match[1] !== token) return json(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const method = match[2]!;
      calls.push(method);
      const params = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, any>) : {};
      switch (method) {
        case 'getMe':
          return ok(res, BOT);
        case 'deleteWebhook':
          return ok(res, true);
        case 'getFile': {
          const stored = files.get(params.file_id);
          if (!stored)
            return json(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
          return ok(res, {
            file_id: params.file_id,
            file_unique_id: params.file_id,
            file_size: stored.size,
            file_path: params.file_id,
          });
        }
        case 'sendMessage': {
          if (rateLimit > 0) {
            const seconds = rateLimit;
            rateLimit = 0;
            return json(res, 429, {
              ok: false,
              error_code: 429,
              description: `Too Many Requests: retry after ${seconds}`,
              parameters: { retry_after: seconds },
            });
          }
          const messageId = nextMessage++;
          sent.push({ ...(params as SentMessage), message_id: messageId });
          return ok(res, {
            message_id: messageId,
            date: Math.floor(Date.now() / 1000),
            chat: { id: Number(params.chat_id), type: 'private' },
            text: params.text,
          });
        }
        case 'answerCallbackQuery':
          callbackAnswers.push(params as FakeTelegram['callbackAnswers'][number]);
          return ok(res, true);
        case 'editMessageText': {
          const original = sent.find(
            (message) => String(message.chat_id) === String(params.chat_id) && message.message_id === params.message_id,
          );
          if (!original)
            return json(res, 400, {
              ok: false,
              error_code: 400,
              description: 'Bad Request: message to edit not found',
            });
          edits.push(params as FakeTelegram['edits'][number]);
          return ok(res, {
            message_id: params.message_id,
            date: Math.floor(Date.now() / 1000),
            chat: { id: Number(params.chat_id), type: 'private' },
            text: params.text,
          });
        }
        case 'getUpdates': {
          const offset = Number(params.offset ?? 0);
          while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
          // As Telegram: update types the client did not ask for are dropped, never delivered.
          const allowed: string[] | undefined = params.allowed_updates;
          if (allowed)
            for (let i = updates.length - 1; i >= 0; i--)
              if (!Object.keys(updates[i]!).some((field) => allowed.includes(field))) updates.splice(i, 1);
          const answer = () => ok(res, updates.slice(0, params.limit ?? 100));
          if (updates.length > 0 || !params.timeout) return answer();
          const wake = () => {
            clearTimeout(timer);
            waiting.delete(wake);
            answer();
          };
          const timer = setTimeout(wake, Math.min(Number(params.timeout), 30) * 1000);
          waiting.add(wake);
          // Node 20: the request's 'close' fires once its body is read; the response's tells a hang-up.
          res.on('close', () => {
            clearTimeout(timer);
            waiting.delete(wake);
          });
          return;
        }
        default:
          return json(res, 400, {
            ok: false,
            error_code: 400,
            description: `Bad Request: fake does not know ${method}`,
          });
      }
    },
  });
  t.teardown(() => {
    for (const wake of waiting) wake();
  });
  return {
    ...server,
    apiRoot: server.origin,
    token,
    sent,
    calls,
    inject(message) {
      const messageId = nextMessage++;
      updates.push({
        update_id: nextUpdate++,
        message: { message_id: messageId, date: Math.floor(Date.now() / 1000), ...message },
      });
      for (const wake of [...waiting]) wake();
      return messageId;
    },
    addFile(content, declaredSize) {
      const id = `file-${files.size + 1}`;
      files.set(id, { content, size: declaredSize ?? content.byteLength });
      return id;
    },
    rateLimitNext(seconds) {
      rateLimit = seconds;
    },
    callbackAnswers,
    edits,
    press(from, messageId, data) {
      const original = sent.find((message) => message.message_id === messageId);
      const id = `cq-${nextQuery++}`;
      updates.push({
        update_id: nextUpdate++,
        callback_query: {
          id,
          from: { id: from, is_bot: false, first_name: `user${from}` },
          chat_instance: 'ci-1',
          data,
          message: {
            message_id: messageId,
            date: Math.floor(Date.now() / 1000),
            chat: { id: Number(original?.chat_id ?? from), type: 'private' },
            from: BOT,
            text: original?.text ?? '',
          },
        },
      });
      for (const wake of [...waiting]) wake();
      return id;
    },
  };
}
