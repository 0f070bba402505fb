/**
 * The extension's manifest config (the owner's, in `extensions.json`; changed live with
 * `PATCH /runtime/extensions/channels/config`: adapters whose type settings changed reconnect).
 */
import { Type, type Static } from 'typebox';

export const ChannelsOptions = Type.Object(
  {
    reconnectBaseMs: Type.Integer({
      minimum: 1,
      default: 1000,
      description: 'first reconnect delay; doubles (with jitter) per failure',
    }),
    reconnectMaxMs: Type.Integer({ minimum: 1, default: 60_000, description: 'longest reconnect delay' }),
    connectTimeoutMs: Type.Integer({
      minimum: 100,
      default: 30_000,
      description: 'a connect attempt that has not finished by then fails (status error) and is retried with backoff',
    }),
    sendAttempts: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 5,
      description: 'tries per outbound chunk before the outbox row fails',
    }),
    maxRetryAfterMs: Type.Integer({
      minimum: 0,
      default: 120_000,
      description: "a platform's rate-limit wait longer than this fails the row instead of waiting",
    }),
    owners: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 320 }), {
      default: {},
      description:
        "per adapter type, the owner's own account there (`telegram`: user id, `slack`: member id U…, `discord`: user id, `email`: address): agents' tasks are posted to it with buttons, and only it may answer them",
    }),
    types: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }), {
      default: {},
      description:
        'per adapter type, owner settings handed to the adapter (`telegram: {apiRoot}`, `slack: {apiUrl}`, `discord: {api}`): where credentials go is never up to an agent',
    }),
  },
  { additionalProperties: false },
);
export type ChannelsOptions = Static<typeof ChannelsOptions>;
