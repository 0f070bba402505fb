/** Route schemas of the providers extension: validation, reply types and the OpenAPI document. */
import { Type } from 'typebox';
import { AgentIdParams } from '@agt/contracts';

export const TAG = 'Providers & sign-in';

/** The settings accept any kind name (the kernel does not know the kinds); this extension serves four. */
const SettingsKind = Type.String({
  description:
    'anthropic, openai, openai-compatible or openrouter; any other kind is listed with status `unsupported_type`',
});

export const CheckResult = Type.Object(
  {
    ok: Type.Boolean(),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Upstream HTTP status; null when the provider was not reached',
    }),
    latencyMs: Type.Integer({ minimum: 0 }),
    method: Type.Union([Type.Literal('models'), Type.Literal('completion')], {
      description: 'Models list, or a 1-token completion where there is none',
    }),
    error: Type.Optional(Type.String()),
    checkedAt: Type.Integer({ description: 'Epoch ms' }),
  },
  { additionalProperties: false },
);

export const ProviderInfo = Type.Object(
  {
    id: Type.String(),
    type: SettingsKind,
    name: Type.String(),
    baseUrl: Type.String(),
    defaultModel: Type.Union([Type.String(), Type.Null()]),
    apiKeyEnv: Type.Union([Type.String(), Type.Null()], {
      description: 'Environment variable holding the key (the key is never returned)',
    }),
    keyPresent: Type.Boolean(),
    requestDelayMs: Type.Integer({ minimum: 0 }),
    status: Type.Union(
      [
        Type.Literal('unchecked'),
        Type.Literal('reachable'),
        Type.Literal('unreachable'),
        Type.Literal('missing_key'),
        Type.Literal('unsupported_type'),
      ],
      {
        description:
          '`unsupported_type` when this extension does not serve its `type` (its check and models answer 422); ' +
          '`missing_key` when a needed key is absent; else the outcome of the last check (`unchecked` before any)',
      },
    ),
    lastCheck: Type.Union([CheckResult, Type.Null()]),
  },
  { additionalProperties: false },
);

export const ProviderList = Type.Object({ providers: Type.Array(ProviderInfo) }, { additionalProperties: false });

export const ModelList = Type.Object(
  {
    provider: Type.String(),
    models: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          name: Type.Optional(Type.String()),
          ownedBy: Type.Optional(Type.String()),
          created: Type.Optional(Type.Integer({ description: 'Epoch ms' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const AgentProviderInfo = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    name: Type.String(),
    baseUrl: Type.String(),
    preset: Type.Union([Type.String(), Type.Null()]),
    defaultModel: Type.Union([Type.String(), Type.Null()]),
    requestDelayMs: Type.Integer({ minimum: 0 }),
    credential: Type.String({ description: 'Name of the sealed credential holding the key: `provider:<id>`' }),
    keyPresent: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const AgentProviderList = Type.Object(
  { agentId: Type.String(), providers: Type.Array(AgentProviderInfo) },
  { additionalProperties: false },
);

export const ProviderParams = Type.Object({ providerId: Type.String({ minLength: 1 }) });
/** Path params of agent-scoped routes: the contract's one `AgentIdParams`. */
export const AgentParams = AgentIdParams;
export const AgentProviderParams = Type.Object({
  id: Type.String({ minLength: 1 }),
  providerId: Type.String({ minLength: 1 }),
});
