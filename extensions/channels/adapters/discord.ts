/**
 * Discord through discord.js: the gateway (its URL from `GET /gateway/bot` of the REST API) with the
 * guild-message, direct-message and message-content intents, and `Partials.Channel` so direct messages
 * reach us without a cached channel; replies through REST `POST /channels/{id}/messages` with a message
 * reference. discord.js would resume on its own; a closed shard is handed back to the core instead, which
 * reconnects with its backoff (one observable behaviour for every type). Rate limits are rejected by the
 * REST client (`rejectOnRateLimit`) so the outbox waits them out. Credential
 * `adapter:discord:DISCORD_BOT_TOKEN`. Owner option `api` (a REST base such as `http://127.0.0.1:8080/api`).
 */
import type { Client as DiscordClient, Message } from 'discord.js';
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

const DEFAULT_API = 'https://discord.com/api';
const READY_TIMEOUT_MS = 20_000;
/** What a bot may upload without boosts; also what we accept per inbound file unless the owner lowers it. */
const ATTACHMENT_CAP = 25 * 1024 * 1024;

class DiscordAdapter implements ChannelAdapter {
  private client: DiscordClient | undefined;
  private discord: typeof import('discord.js') | undefined;

  constructor(private readonly host: AdapterHost) {}

  private get api(): string {
    return ownerServerUrl(this.host, 'api', DEFAULT_API);
  }

  async connect(): Promise<void> {
    const token = await this.host.credential('DISCORD_BOT_TOKEN');
    const discord = (this.discord = await import('discord.js'));
    const { Client, Events, GatewayIntentBits, Partials } = discord;
    const client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      partials: [Partials.Channel],
      rest: { api: this.api, rejectOnRateLimit: () => true, retries: 0 },
    });
    this.client = client;
    client.on(Events.MessageCreate, (message) => {
      const inbound = this.toInbound(message);
      if (inbound) void this.host.receive(inbound);
    });
    // A press of an owner task's button: the gateway's INTERACTION_CREATE (no HTTP interactions endpoint, so
    // no request signature to check: the gateway session is the bot's own). Answered ephemerally.
    client.on(Events.InteractionCreate, (interaction) => {
      if (!interaction.isButton()) return;
      const press = parsePressData(interaction.customId);
      if (!press) return;
      void (async () => {
        const answer = this.host.answerTask
          ? await this.host.answerTask({ ...press, from: interaction.user.id })
          : { ok: false, message: 'Tasks are not offered here.' };
        await interaction.reply({ content: answer.message, flags: discord.MessageFlags.Ephemeral });
      })().catch((error: unknown) =>
        this.host.logger.warn({ err: describe(error) }, 'discord task button not answered'),
      );
    });
    client.on(Events.Error, (error) => this.host.logger.debug({ err: describe(error) }, 'discord client error'));
    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the gateway sent no READY within ${READY_TIMEOUT_MS} ms`)),
        READY_TIMEOUT_MS,
      );
      client.once(Events.ClientReady, () => resolve());
    });
    ready.catch(() => undefined);
    try {
      await client.login(token);
      await ready;
    } catch (error) {
      const status = (error as { status?: number; code?: string }).status;
      if (status === 401 || (error as { code?: string }).code === 'TokenInvalid') {
        throw new AdapterConnectError('Discord refused the bot token: check adapter:discord:DISCORD_BOT_TOKEN');
      }
      // The endpoint and the system's reason when the platform was not reached at all (network-cause.ts).
      const cause = networkCause(error);
      throw new Error(cause ? `Discord: cannot reach ${this.api}: ${cause}` : `Discord: ${describe(error)}`);
    } finally {
      clearTimeout(timer);
    }
    // discord.js resumes by itself (it cannot be told not to), so a closed shard is reported as
    // recovering; only a close it will not recover from hands the connection back to the core.
    client.on(Events.ShardReconnecting, () => {
      if (this.client !== client) return;
      this.host.lost('the Discord gateway connection closed', { recovering: true });
    });
    const recovered = () => {
      if (this.client !== client) return;
      this.host.connected();
    };
    client.on(Events.ShardResume, recovered);
    client.on(Events.ShardReady, recovered);
    client.on(Events.ShardDisconnect, (event) => {
      if (this.client === client) this.host.lost(`the Discord gateway closed the connection (${event.code})`);
    });
  }

  private toInbound(message: Message): AdapterInbound | undefined {
    const me = this.client?.user;
    if (!me || message.author.id === me.id || message.author.bot || message.system) return undefined;
    const dm = message.guildId === null;
    const mentioned = message.mentions.users.has(me.id) || message.mentions.repliedUser?.id === me.id;
    return {
      messageId: message.id,
      chatId: message.channelId,
      chatKind: dm ? 'dm' : 'group',
      sender: { id: message.author.id, name: message.author.username },
      mentioned,
      ...(message.reference?.messageId ? { replyToId: message.reference.messageId } : {}),
      text: message.content,
      attachments: [...message.attachments.values()].map(
        (file, index): InboundAttachment => ({
          name: file.name ?? `attachment-${index + 1}`,
          mimeType: file.contentType ?? null,
          size: typeof file.size === 'number' ? file.size : null,
          fetch: async (max) => {
            if (!this.trustedFileUrl(file.url)) throw new Error('the attachment URL is not on a Discord host');
            return fetchLimited(file.url, max);
          },
        }),
      ),
      extra: { ...(message.guildId ? { guild_id: message.guildId } : {}) },
    };
  }

  private trustedFileUrl(raw: string): boolean {
    try {
      const url = new URL(raw);
      if (url.origin === new URL(this.api).origin) return true;
      return (
        url.protocol === 'https:' && (url.hostname === 'cdn.discordapp.com' || url.hostname === 'media.discordapp.net')
      );
    } catch {
      return false;
    }
  }

  async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // A shard between reconnect attempts makes one more after its pause even once destroyed (and the
    // destroyed client no longer lists it): stop its reconnects first, then close.
    const gateway = (
      client.ws as unknown as { _ws?: { strategy?: { shards?: Map<number, { internalConnect(): Promise<void> }> } } }
    )._ws;
    for (const shard of gateway?.strategy?.shards?.values() ?? []) shard.internalConnect = async () => {};
    await Promise.race([
      client.destroy().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 3000).unref()),
    ]);
  }

  /** In the direct-message channel with the owner (opened, or found, by `POST /users/@me/channels`). */
  async postTask(owner: string, prompt: TaskPrompt): Promise<TaskPost> {
    const client = this.client;
    const discord = this.discord;
    if (!client || !discord) throw new Error('not connected');
    const channel = (await client.rest.post(discord.Routes.userChannels(), { body: { recipient_id: owner } })) as {
      id: string;
    };
    const rows: Array<Array<{ id: string; label: string }>> = [];
    // At most five buttons per action row.
    for (let i = 0; i < prompt.choices.length; i += 5) rows.push(prompt.choices.slice(i, i + 5));
    const sent = (await client.rest.post(discord.Routes.channelMessages(channel.id), {
      body: {
        content: clip(promptLines(prompt)),
        allowed_mentions: { parse: [] },
        components: rows.map((row) => ({
          type: discord.ComponentType.ActionRow,
          components: row.map((choice) => ({
            type: discord.ComponentType.Button,
            style: choice.id === 'no' ? discord.ButtonStyle.Danger : discord.ButtonStyle.Primary,
            label: choice.label.slice(0, 80),
            custom_id: pressData(prompt.token, choice.id),
          })),
        })),
      },
    })) as { id: string };
    return { chatId: channel.id, messageId: sent.id };
  }

  async closeTask(post: TaskPost, prompt: TaskPrompt, outcome: string): Promise<void> {
    const client = this.client;
    const discord = this.discord;
    if (!client || !discord) return;
    await client.rest.patch(discord.Routes.channelMessage(post.chatId, post.messageId), {
      body: { content: clip(`${prompt.text}\n\n${outcome}`), components: [], allowed_mentions: { parse: [] } },
    });
  }

  async send(message: AdapterOutbound): Promise<{ messageId: string }> {
    const client = this.client;
    const discord = this.discord;
    if (!client || !discord) throw new Error('not connected');
    try {
      const sent = (await client.rest.post(discord.Routes.channelMessages(message.chatId), {
        body: {
          content: message.text,
          allowed_mentions: { parse: [] },
          ...(message.replyToId
            ? { message_reference: { message_id: message.replyToId, fail_if_not_exists: false } }
            : {}),
        },
      })) as { id?: string };
      return { messageId: String(sent.id ?? '') };
    } catch (error) {
      if (error instanceof discord.RateLimitError)
        throw new AdapterSendError('rate limited', { statusCode: 429, retryAfterMs: error.retryAfter });
      if (error instanceof discord.DiscordAPIError)
        throw new AdapterSendError(`Discord refused: ${describe(error)}`, {
          statusCode: error.status,
          permanent: error.status < 500,
        });
      throw new Error(describe(error));
    }
  }
}

const clip = (text: string) => (text.length > 2000 ? `${text.slice(0, 1999)}…` : text);

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error))
    .replace(/[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}/g, '[redacted]')
    .slice(0, 300);
}

export const discordAdapter: AdapterType = {
  type: 'discord',
  credentials: ['DISCORD_BOT_TOKEN'],
  limits: { maxTextLength: 2000, maxAttachmentSize: ATTACHMENT_CAP },
  create: (host) => new DiscordAdapter(host),
};
