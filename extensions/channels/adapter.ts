/**
 * The adapter interface of the `channels` extension. The types live in `@agt/contracts`
 * (the public surface, so a third-party package can implement them too); this module re-exports them for
 * the shipped adapters in `./adapters/`.
 *
 * Writing an adapter (say `adapters/email.ts`):
 * 1. Export an {@link AdapterType}: `type` (the config key `adapters.email` and the address scheme
 *    `email:<chat id>`), the `credentials` keys it reads (sealed agent credentials `adapter:email:<KEY>`),
 *    an optional TypeBox `configSchema` for the instance's non-secret `config`, its `limits`, and `create`.
 * 2. `create(host)` returns a {@link ChannelAdapter} and does nothing else. Import the platform SDK lazily
 *    inside `connect` (`await import('imapflow')`): the extension's module is imported even when disabled.
 * 3. `connect()`: read credentials with `await host.credential('KEY')` (it throws
 *    {@link AdapterConnectError} itself when unset or locked); take server addresses that decide where a
 *    credential is sent from `host.options` (the owner's manifest settings, `channels.config.types.<type>`),
 *    never from the agent's `host.config`; connect, start listening, and resolve once
 *    messages can flow. Throw `AdapterConnectError` when retrying cannot help (credentials refused);
 *    any other error is retried by the core with backoff (status `connecting`, recent errors listed).
 * 4. For each platform message call `await host.receive({...})` ({@link AdapterInbound}): ids as strings,
 *    `chatId` is where a reply goes, `chatKind` `dm` or `group`, `mentioned`, `threadId` / `replyToId`
 *    for threading, and attachments as `{name, mimeType, size, fetch(maxBytes)}` (not downloaded unless
 *    the core keeps them). The core applies the policy, the size limit, stores files under
 *    `inbox/<type>/`, commits the inbox row and runs `on_inbox`. Do not filter by policy yourself; do skip
 *    the bot's own messages.
 * 5. A dropped connection after `connect`: `host.lost(reason)` (the core reconnects with backoff) or, when
 *    the library reconnects by itself, `host.lost(reason, {recovering: true})` then `host.connected()`.
 * 6. `send({chatId, text, threadId?, replyToId?, outboxId, chunk})`: one chunk, already cut to
 *    `limits.maxTextLength`; resolve `{messageId}`. Reject with {@link AdapterSendError}: `retryAfterMs`
 *    for a rate-limit answer, `permanent: true` when retrying cannot help; anything else is retried.
 * 7. `disconnect()`: close every socket, timer and IDLE; never throw; may run twice or after a failed connect.
 * 8. Add one line to `adapters/index.ts` (`BUILTIN_ADAPTER_TYPES`).
 * 9. Optional, owner tasks (owner-tasks.ts): `postTask(owner, prompt)` sends the prompt to the owner's own
 *    account with `prompt.choices` as buttons whose data carries `prompt.token` and the choice id; each press
 *    goes to `host.answerTask({token, choice, from})`, whose `message` is shown to the presser (a refusal
 *    too). `closeTask(post, prompt, outcome)` edits the post once the task is closed. A reply to the post
 *    arrives as an ordinary inbound message (`replyToId`): the core takes it as an answer.
 *
 * A third-party package: an extension with `dependsOn: ['channels']` whose `register` runs
 * `const remove = ctx.use(channelAdapterTypes).add(myType)` and calls `remove()` from its `stop`.
 */
export {
  ADAPTER_TYPE_PATTERN,
  AdapterConnectError,
  AdapterSendError,
  channelAdapterTypes,
  type AdapterHost,
  type AdapterInbound,
  type AdapterOutbound,
  type AdapterStatus,
  type AdapterType,
  type ChannelAdapter,
  type ChannelAdapterTypes,
  type InboundAttachment,
  type PlatformLimits,
  type TaskPost,
  type TaskPress,
  type TaskPrompt,
} from '@agt/contracts';
