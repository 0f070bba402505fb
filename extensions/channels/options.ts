/** The extension's manifest config (the owner's, in `extensions.json`). */
import { Type, type Static } from 'typebox';

export const ChannelsOptions = Type.Object(
  {
    reconnectBaseMs: Type.Integer({ minimum: 1, default: 1000, description: 'first reconnect delay; doubles (with jitter) per failure' }),
    reconnectMaxMs: Type.Integer({ minimum: 1, default: 60_000, description: 'longest reconnect delay' }),
    sendAttempts: Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'tries per outbound chunk before the outbox row fails' }),
    maxRetryAfterMs: Type.Integer({ minimum: 0, default: 120_000, description: "a platform's rate-limit wait longer than this fails the row instead of waiting" }),
    types: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }), {
      default: {},
      description: 'per adapter type, owner settings handed to the adapter (`telegram: {apiRoot}`, `slack: {apiUrl}`, `discord: {api}`): where credentials go is never up to an agent',
    }),
  },
  { additionalProperties: false },
);
export type ChannelsOptions = Static<typeof ChannelsOptions>;
