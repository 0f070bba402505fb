/** Wire shapes of the Channels routes; the OpenAPI description is generated from them. */
import { Type } from 'typebox';
import { AgentIdParams } from '@agt/contracts';
import { PolicySchema } from './policy.js';

export const TAG = 'Channels';

const Status = Type.Union([
  Type.Literal('connected'),
  Type.Literal('connecting'),
  Type.Literal('disconnected'),
  Type.Literal('error'),
]);

export const AdapterReport = Type.Object({
  type: Type.String(),
  enabled: Type.Boolean(),
  status: Status,
  error: Type.Optional(Type.String({ description: 'why it is in `error`, or the last failure while `connecting`' })),
  connectedAt: Type.Optional(Type.Integer({ description: 'epoch ms of the current connection' })),
  restartCount: Type.Integer({ description: 'reconnects after a dropped connection plus restarts' }),
  recentErrors: Type.Array(Type.Object({ at: Type.Integer(), message: Type.String() }), {
    description: 'the last ten failures, oldest first',
  }),
});

export const AgentAdapters = Type.Object({ agentId: Type.String(), adapters: Type.Array(AdapterReport) });
export const OneAdapter = Type.Object({ agentId: Type.String(), adapter: AdapterReport });
export const Removed = Type.Object({ agentId: Type.String(), success: Type.Boolean() });

export const ChannelsList = Type.Object({
  types: Type.Array(
    Type.Object({
      type: Type.String(),
      credentials: Type.Array(Type.String({ description: 'sealed agent credential names it reads' })),
      maxTextLength: Type.Integer(),
    }),
  ),
  agents: Type.Array(
    Type.Object({
      agentId: Type.String(),
      name: Type.String(),
      adapters: Type.Array(Type.Object({ type: Type.String(), enabled: Type.Boolean(), status: Status })),
    }),
  ),
});

/** Path params of agent-scoped routes: the contract's one `AgentIdParams`. */
export const AgentParams = AgentIdParams;
export const AdapterParams = Type.Object({ id: Type.String({ minLength: 1 }), type: Type.String({ maxLength: 64 }) });

/** The PUT body: AdapterInstanceConfig with the policy spelled out; `config` is checked by the type's own schema. */
export const AdapterInstanceBody = Type.Object(
  {
    enabled: Type.Boolean(),
    config: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            "the adapter's settings (no secrets: credentials are sealed agent credentials `adapter:<type>:<KEY>`)",
        },
      ),
    ),
    policy: Type.Optional(PolicySchema),
    limits: Type.Optional(
      Type.Object(
        { max_attachment_size: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes; default 10 MB' })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
