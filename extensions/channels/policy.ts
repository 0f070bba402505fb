/**
 * Who may reach the agent through an adapter (its `policy`): direct messages (`all`, `allowlist` of
 * `allow_from` sender ids, `none`) and group messages (`all`, only those that `mention` the bot, `none`).
 * The defaults let nobody in: an agent answers strangers only when its owner says so.
 */
import { Type, type Static } from 'typebox';
import type { AdapterInbound } from './adapter.js';

export const PolicySchema = Type.Object(
  {
    dm: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('allowlist'), Type.Literal('none')], { default: 'allowlist' }),
    ),
    groups: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('mention'), Type.Literal('none')], { default: 'none' }),
    ),
    allow_from: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 1000,
        description: 'sender ids as the platform gives them (Telegram user id, Slack user id, email address)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PolicyConfig = Static<typeof PolicySchema>;

export interface Policy {
  dm: 'all' | 'allowlist' | 'none';
  groups: 'all' | 'mention' | 'none';
  allowFrom: ReadonlySet<string>;
}

export function policyOf(config: PolicyConfig | undefined): Policy {
  return {
    dm: config?.dm ?? 'allowlist',
    groups: config?.groups ?? 'none',
    allowFrom: new Set((config?.allow_from ?? []).map((id) => id.toLowerCase())),
  };
}

/** Why the message is refused, or null when it may go in. */
export function refusal(policy: Policy, message: AdapterInbound): string | null {
  if (message.chatKind === 'dm') {
    if (policy.dm === 'none') return 'direct messages are off (policy.dm: none)';
    if (policy.dm === 'allowlist' && !policy.allowFrom.has(message.sender.id.toLowerCase()))
      return 'the sender is not in policy.allow_from (policy.dm: allowlist)';
    return null;
  }
  if (policy.groups === 'none') return 'group messages are off (policy.groups: none)';
  if (policy.groups === 'mention' && !message.mentioned) return 'the bot was not mentioned (policy.groups: mention)';
  return null;
}
