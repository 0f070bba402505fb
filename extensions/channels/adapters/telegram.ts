/**
 * Telegram through grammy: long polling of the Bot API (`getUpdates`, our own loop so every failure is
 * seen: a dropped poll hands the connection back to the core, which reconnects with backoff), replies
 * with `sendMessage` (threaded with `reply_parameters` and the forum topic). Credential
 * `adapter:telegram:TELEGRAM_BOT_TOKEN`. Owner option `apiRoot` (a local Bot API server).
 */
import type { Bot as GrammyBot } from 'grammy';
import type { Message } from 'grammy/types';
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
import { fetchLimited, TooLarge } from './download.js';
import { ownerServerUrl } from './server-url.js';
import { networkCause } from './network-cause.js';

const DEFAULT_API_ROOT = 'https://api.telegram.org';
const POLL_TIMEOUT_S = 30;
/** Bot API downloads stop at 20 MB. */
const DOWNLOAD_CAP = 20 * 1024 * 1024;

type Grammy = typeof import('grammy');

function attachmentsOf(
  message: Message,
  download: (fileId: string, max: number) => Promise<Uint8Array>,
): InboundAttachment[] {
  const files: Array<{ id: string; name: string; mime: string | null; size: number | null }> = [];
  const add = (file: { file_id: string; file_size?: number } | undefined, name: string, mime: string | null) => {
    if (file) files.push({ id: file.file_id, name, mime, size: file.file_size ?? null });
  };
  add(message.document, message.document?.file_name ?? 'document', message.document?.mime_type ?? null);
  add(message.photo?.at(-1), 'photo.jpg', 'image/jpeg');
  add(message.video, message.video?.file_name ?? 'video.mp4', message.video?.mime_type ?? null);
  add(message.audio, message.audio?.file_name ?? 'audio', message.audio?.mime_type ?? null);
  add(message.voice, 'voice.ogg', message.voice?.mime_type ?? 'audio/ogg');
  return files.map((file) => ({
    name: file.name,
    mimeType: file.mime,
    size: file.size,
    fetch: (max: number) => download(file.id, max),
  }));
}

class TelegramAdapter implements ChannelAdapter {
  private bot: GrammyBot | undefined;
  private grammy: Grammy | undefined;
  private polling: AbortController | undefined;

  constructor(private readonly host: AdapterHost) {}

  private get apiRoot(): string {
    return ownerServerUrl(this.host, 'apiRoot', DEFAULT_API_ROOT);
  }

  async connect(): Promise<void> {
    const token = await this.host.credential('TELEGRAM_BOT_TOKEN');
    const grammy = (this.grammy = await import('grammy'));
    const bot = new grammy.Bot(token, { client: { apiRoot: this.apiRoot } });
    this.bot = bot;
    // Aborted by disconnect: ends the calls below too (a connect that timed out must not linger).
    const polling = (this.polling = new AbortController());
    try {
      // Not `bot.init()`: grammy retries a network error there forever, so a Telegram that cannot be
      // reached left the adapter `connecting` with no error. One call; the core retries with backoff.
      bot.botInfo = await bot.api.getMe(polling.signal as never);
      await bot.api.deleteWebhook(undefined, polling.signal as never);
    } catch (error) {
      if (error instanceof grammy.GrammyError && (error.error_code === 401 || error.error_code === 404)) {
        throw new AdapterConnectError(
          `Telegram refused the bot token (${error.error_code}): check adapter:telegram:TELEGRAM_BOT_TOKEN`,
        );
      }
      // The endpoint and the system's reason (refused, no such host, TLS), not grammy's "Network request
      // for 'getMe' failed!" alone; the URL is the API root, never the token's path.
      const cause = networkCause(error);
      if (cause) throw new Error(`Telegram: cannot reach ${this.apiRoot} (getMe): ${cause}`);
      throw new Error(`Telegram: ${describe(error)} (${this.apiRoot})`);
    }
    bot.on('message', async (ctx) => {
      const inbound = this.toInbound(ctx.message, token);
      if (inbound) await this.host.receive(inbound);
    });
    // A press of an owner task's button (owner-tasks.ts): answered with the core's line, shown to the presser.
    bot.on('callback_query:data', async (ctx) => {
      const press = parsePressData(ctx.callbackQuery.data);
      const answer =
        press && this.host.answerTask
          ? await this.host.answerTask({ ...press, from: String(ctx.callbackQuery.from.id) })
          : { ok: false, message: 'This button is not ours.' };
      await ctx.answerCallbackQuery({ text: answer.message, show_alert: !answer.ok });
    });
    bot.catch((error) => this.host.logger.warn({ err: describe(error.error) }, 'telegram update handling failed'));
    void this.poll(bot, polling.signal);
  }

  private async poll(bot: GrammyBot, signal: AbortSignal): Promise<void> {
    let offset = 0;
    while (!signal.aborted) {
      let updates: Awaited<ReturnType<typeof bot.api.getUpdates>>;
      try {
        updates = await bot.api.getUpdates(
          { offset, timeout: POLL_TIMEOUT_S, allowed_updates: ['message', 'callback_query'] },
          signal as never,
        );
      } catch (error) {
        if (!signal.aborted) this.host.lost(`Telegram getUpdates failed: ${describe(error)}`);
        return;
      }
      for (const update of updates) {
        offset = Math.max(offset, update.update_id + 1);
        if (signal.aborted) return;
        await bot
          .handleUpdate(update)
          .catch((error: unknown) =>
            this.host.logger.warn({ err: describe(error) }, 'telegram update handling failed'),
          );
      }
    }
  }

  private toInbound(message: Message, token: string): AdapterInbound | undefined {
    const bot = this.bot!;
    const me = bot.botInfo;
    if (!message.from || message.from.id === me.id) return undefined;
    const text = message.text ?? message.caption ?? '';
    const entities = message.entities ?? message.caption_entities ?? [];
    const handle = `@${me.username}`.toLowerCase();
    const mentioned =
      entities.some(
        (entity) =>
          (entity.type === 'mention' &&
            text.slice(entity.offset, entity.offset + entity.length).toLowerCase() === handle) ||
          (entity.type === 'text_mention' && entity.user.id === me.id),
      ) || message.reply_to_message?.from?.id === me.id;
    const download = async (fileId: string, max: number) => {
      const file = await bot.api.getFile(fileId);
      if (file.file_size !== undefined && file.file_size > max) throw new TooLarge(max);
      if (!file.file_path) throw new Error('Telegram gave no file path');
      return fetchLimited(`${this.apiRoot}/file/bot${token}/${file.file_path}`, max);
    };
    return {
      messageId: String(message.message_id),
      chatId: String(message.chat.id),
      chatKind: message.chat.type === 'private' ? 'dm' : 'group',
      sender: {
        id: String(message.from.id),
        ...(message.from.username || message.from.first_name
          ? { name: message.from.username ?? message.from.first_name }
          : {}),
      },
      mentioned,
      ...(message.is_topic_message && message.message_thread_id !== undefined
        ? { threadId: String(message.message_thread_id) }
        : {}),
      ...(message.reply_to_message ? { replyToId: String(message.reply_to_message.message_id) } : {}),
      text,
      attachments: attachmentsOf(message, download),
      extra: {
        chat_type: message.chat.type,
        ...('title' in message.chat && message.chat.title ? { chat_title: message.chat.title } : {}),
      },
    };
  }

  async disconnect(): Promise<void> {
    this.polling?.abort();
    this.polling = undefined;
    this.bot = undefined;
  }

  /** The owner's private chat with the bot has the owner's user id as its chat id. */
  async postTask(owner: string, prompt: TaskPrompt): Promise<TaskPost> {
    const bot = this.bot;
    if (!bot) throw new Error('not connected');
    const sent = await bot.api.sendMessage(owner, clip(promptLines(prompt)), {
      reply_markup: {
        inline_keyboard: prompt.choices.map((choice) => [
          { text: choice.label, callback_data: pressData(prompt.token, choice.id) },
        ]),
      },
    });
    return { chatId: String(sent.chat.id), messageId: String(sent.message_id) };
  }

  /** Editing the text without `reply_markup` removes the buttons. */
  async closeTask(post: TaskPost, prompt: TaskPrompt, outcome: string): Promise<void> {
    await this.bot?.api.editMessageText(post.chatId, Number(post.messageId), clip(`${prompt.text}\n\n${outcome}`));
  }

  async send(message: AdapterOutbound): Promise<{ messageId: string }> {
    const bot = this.bot;
    const grammy = this.grammy;
    if (!bot || !grammy) throw new Error('not connected');
    const replyTo = Number(message.replyToId);
    const thread = Number(message.threadId);
    try {
      const sent = await bot.api.sendMessage(message.chatId, message.text, {
        ...(Number.isSafeInteger(replyTo) && message.replyToId
          ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
          : {}),
        ...(Number.isSafeInteger(thread) && message.threadId ? { message_thread_id: thread } : {}),
      });
      return { messageId: String(sent.message_id) };
    } catch (error) {
      if (error instanceof grammy.GrammyError) {
        const retryAfter = error.parameters?.retry_after;
        if (error.error_code === 429)
          throw new AdapterSendError(`rate limited: ${error.description}`, {
            statusCode: 429,
            ...(retryAfter !== undefined ? { retryAfterMs: retryAfter * 1000 } : {}),
          });
        throw new AdapterSendError(error.description, {
          statusCode: error.error_code,
          permanent: error.error_code < 500,
        });
      }
      throw new Error(describe(error));
    }
  }
}

const clip = (text: string) => (text.length > 4096 ? `${text.slice(0, 4095)}…` : text);

/** Error text without the token (grammy's HttpError names the method, never the URL, but be sure). */
function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/bot\d+:[A-Za-z0-9_-]+/g, 'bot[redacted]').slice(0, 300);
}

export const telegramAdapter: AdapterType = {
  type: 'telegram',
  credentials: ['TELEGRAM_BOT_TOKEN'],
  limits: { maxTextLength: 4096, maxAttachmentSize: DOWNLOAD_CAP },
  create: (host) => new TelegramAdapter(host),
};
