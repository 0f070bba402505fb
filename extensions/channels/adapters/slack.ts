/**
 * Slack through Bolt in socket mode: events arrive over the socket-mode WebSocket (opened with the app
 * token), replies go through the Web API's `chat.postMessage` (bot token), in the thread of the message
 * answered. Bolt's own reconnect is off: a dropped socket is handed back to the core, which reconnects
 * with its backoff, so every adapter type recovers the same observable way. Rate limits are not retried
 * inside the Web API client: the outbox waits `Retry-After` itself. Credentials
 * `adapter:slack:SLACK_BOT_TOKEN` (xoxb-) and `adapter:slack:SLACK_APP_TOKEN` (xapp-). Owner option
 * `apiUrl` (a Web API base such as `http://127.0.0.1:8080/api/`).
 */
import type { App as BoltApp, LogLevel, types as SlackTypes } from '@slack/bolt';
import {
  AdapterConnectError,
  AdapterSendError,
  type AdapterHost,
  type AdapterInbound,
  type AdapterOutbound,
  type AdapterType,
  type ChannelAdapter,
  type InboundAttachment,
  type TaskPost,
  type TaskPrompt,
} from '../adapter.js';
import { parsePressData, pressData, promptLines } from './task-buttons.js';
import { fetchLimited } from './download.js';
import { ownerServerUrl } from './server-url.js';
import { networkCause } from './network-cause.js';

const DEFAULT_API_URL = 'https://slack.com/api/';

interface SlackFile {
  id?: string;
  name?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
}

interface SlackMessage {
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  files?: SlackFile[];
}

const UNRECOVERABLE_AUTH = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
]);

class SlackAdapter implements ChannelAdapter {
  private app: BoltApp | undefined;
  private botUserId = '';

  constructor(private readonly host: AdapterHost) {}

  private get apiUrl(): string {
    // Bolt joins method names onto it: it ends in a slash.
    return `${ownerServerUrl(this.host, 'apiUrl', DEFAULT_API_URL)}/`;
  }

  async connect(): Promise<void> {
    const botToken = await this.host.credential('SLACK_BOT_TOKEN');
    const appToken = await this.host.credential('SLACK_APP_TOKEN');
    const bolt = await import('@slack/bolt');
    const logger = quietLogger(this.host, bolt.LogLevel.ERROR);
    const clientOptions = { slackApiUrl: this.apiUrl, rejectRateLimitedCalls: true, retryConfig: { retries: 0 } };
    const receiver = new bolt.SocketModeReceiver({
      appToken,
      logger,
      autoReconnectEnabled: false,
      installerOptions: { clientOptions },
    });
    const app = new bolt.App({ token: botToken, receiver, logger, clientOptions, deferInitialization: true });
    this.app = app;
    try {
      await app.init();
      const auth = await app.client.auth.test();
      this.botUserId = String(auth.user_id ?? '');
    } catch (error) {
      throw classifyConnect(error, this.apiUrl);
    }
    app.message(async ({ message }) => {
      const inbound = this.toInbound(message as unknown as SlackMessage, botToken);
      if (inbound) await this.host.receive(inbound);
    });
    // A press of an owner task's button (block_actions over the socket, which the app token authenticates:
    // socket mode has no signed HTTP request to verify). The presser alone sees the core's answer.
    app.action({ type: 'block_actions', action_id: TASK_ACTION }, async ({ ack, body, action, client }) => {
      await ack();
      const press = parsePressData((action as { value?: string }).value);
      const user = body.user.id;
      const answer =
        press && this.host.answerTask
          ? await this.host.answerTask({ ...press, from: user })
          : { ok: false, message: 'This button is not ours.' };
      const channel = body.channel?.id;
      if (channel) await client.chat.postEphemeral({ channel, user, text: answer.message });
    });
    app.error(async (error) => this.host.logger.warn({ err: describe(error) }, 'slack event handling failed'));
    const client = receiver.client;
    try {
      await app.start();
    } catch (error) {
      throw classifyConnect(error, this.apiUrl);
    }
    // Only after start: a failed start must not also report a loss.
    client.on('disconnected', () => {
      if (this.app === app) this.host.lost('the Slack socket-mode connection closed');
    });
  }

  private toInbound(message: SlackMessage, botToken: string): AdapterInbound | undefined {
    if (message.subtype && message.subtype !== 'file_share' && message.subtype !== 'thread_broadcast') return undefined;
    if (!message.user || message.user === this.botUserId || message.bot_id) return undefined;
    const text = message.text ?? '';
    return {
      messageId: message.ts,
      chatId: message.channel,
      chatKind: message.channel_type === 'im' ? 'dm' : 'group',
      sender: { id: message.user },
      mentioned: this.botUserId !== '' && text.includes(`<@${this.botUserId}>`),
      ...(message.thread_ts && message.thread_ts !== message.ts
        ? { threadId: message.thread_ts, replyToId: message.thread_ts }
        : {}),
      text,
      attachments: (message.files ?? []).map((file, index) => this.attachment(file, index, botToken)),
      extra: { channel_type: message.channel_type ?? null },
    };
  }

  private attachment(file: SlackFile, index: number, botToken: string): InboundAttachment {
    return {
      name: file.name ?? `file-${index + 1}`,
      mimeType: file.mimetype ?? null,
      size: typeof file.size === 'number' ? file.size : null,
      fetch: async (max) => {
        const url = file.url_private_download ?? file.url_private;
        if (!url) throw new Error('Slack gave no download URL');
        // The bot token goes only to Slack's own file hosts (or the configured API's origin), never to a URL
        // a message could point elsewhere.
        if (!this.trustedFileUrl(url)) throw new Error('the file URL is not on a Slack host');
        return fetchLimited(url, max, { authorization: `Bearer ${botToken}` });
      },
    };
  }

  private trustedFileUrl(raw: string): boolean {
    try {
      const url = new URL(raw);
      if (url.origin === new URL(this.apiUrl).origin) return true;
      return (
        url.protocol === 'https:' &&
        (url.hostname === 'files.slack.com' ||
          url.hostname.endsWith('.slack.com') ||
          url.hostname.endsWith('.slack-edge.com'))
      );
    } catch {
      return false;
    }
  }

  async disconnect(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    if (!app) return;
    await Promise.race([
      app.stop().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 3000).unref()),
    ]);
  }

  /** Posted to the owner's member id: Slack delivers it in the app's direct messages with them. */
  async postTask(owner: string, prompt: TaskPrompt): Promise<TaskPost> {
    const app = this.app;
    if (!app) throw new Error('not connected');
    const text = promptLines(prompt);
    const result = await app.client.chat.postMessage({
      channel: owner,
      text,
      blocks: [
        { type: 'section', text: { type: 'plain_text', text: clip(text) } },
        ...(prompt.choices.length > 0
          ? [
              <SlackTypes.ActionsBlock>{
                type: 'actions',
                elements: prompt.choices.map((choice) => ({
                  type: 'button' as const,
                  action_id: `agt_task_${choice.id}`,
                  text: { type: 'plain_text', text: choice.label },
                  value: pressData(prompt.token, choice.id),
                })),
              },
            ]
          : []),
      ],
    });
    return { chatId: String(result.channel ?? owner), messageId: String(result.ts ?? '') };
  }

  async closeTask(post: TaskPost, prompt: TaskPrompt, outcome: string): Promise<void> {
    const text = `${prompt.text}\n\n${outcome}`;
    await this.app?.client.chat.update({
      channel: post.chatId,
      ts: post.messageId,
      text,
      blocks: [{ type: 'section', text: { type: 'plain_text', text: clip(text) } }],
    });
  }

  async send(message: AdapterOutbound): Promise<{ messageId: string }> {
    const app = this.app;
    if (!app) throw new Error('not connected');
    const thread = message.threadId ?? message.replyToId;
    try {
      const result = await app.client.chat.postMessage({
        channel: message.chatId,
        text: message.text,
        ...(thread ? { thread_ts: thread } : {}),
      });
      return { messageId: String(result.ts ?? '') };
    } catch (error) {
      const e = error as { code?: string; retryAfter?: number; data?: { error?: string }; statusCode?: number };
      if (e.code === 'slack_webapi_rate_limited_error')
        throw new AdapterSendError('rate limited', { statusCode: 429, retryAfterMs: (e.retryAfter ?? 1) * 1000 });
      if (e.code === 'slack_webapi_platform_error')
        throw new AdapterSendError(`Slack refused: ${e.data?.error ?? 'error'}`, { permanent: true, statusCode: 200 });
      if (e.code === 'slack_webapi_http_error' && typeof e.statusCode === 'number')
        throw new AdapterSendError(`Slack answered ${e.statusCode}`, {
          statusCode: e.statusCode,
          permanent: e.statusCode < 500,
        });
      throw new Error(describe(error));
    }
  }
}

/** The action ids of owner-task buttons (`agt_task_<choice>`). */
const TASK_ACTION = /^agt_task_[a-z0-9]{1,8}$/;
/** A section block's text is at most 3000 characters. */
const clip = (text: string) => (text.length > 3000 ? `${text.slice(0, 2999)}…` : text);

function classifyConnect(error: unknown, apiUrl: string): Error {
  const e = error as { code?: string; data?: { error?: string } };
  if (e.code === 'slack_webapi_platform_error' && UNRECOVERABLE_AUTH.has(e.data?.error ?? '')) {
    return new AdapterConnectError(
      `Slack refused the token (${e.data?.error}): check adapter:slack:SLACK_BOT_TOKEN and adapter:slack:SLACK_APP_TOKEN`,
    );
  }
  // The endpoint and the system's reason when the platform was not reached at all (network-cause.ts).
  const cause = networkCause(error);
  return new Error(cause ? `Slack: cannot reach ${apiUrl}: ${cause}` : `Slack: ${describe(error)}`);
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/xox[a-z]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+/g, '[redacted]').slice(0, 300);
}

/** Bolt's logger interface; its chatter goes to our debug level (Bolt never logs tokens, but redact anyway). */
function quietLogger(host: AdapterHost, level: LogLevel) {
  let current = level;
  const forward = (...parts: unknown[]) =>
    host.logger.debug({ slack: describe(parts.map(String).join(' ')) }, 'slack library');
  return {
    debug: () => {},
    info: () => {},
    warn: forward,
    error: forward,
    setLevel: (next: LogLevel) => void (current = next),
    getLevel: () => current,
    setName: () => {},
  };
}

export const slackAdapter: AdapterType = {
  type: 'slack',
  credentials: ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN'],
  limits: { maxTextLength: 4000 },
  create: (host) => new SlackAdapter(host),
};
