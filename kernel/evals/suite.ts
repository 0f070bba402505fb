/**
 * The eval suite format (docs/evals.md): cases captured from an agent's history or written by hand, each
 * with the assertions its answer must meet. JSON, checked by these schemas wherever a suite comes in.
 */
import { type Static, Type } from 'typebox';

const Text = Type.String({ minLength: 1, maxLength: 100_000 });

const Contains = Type.Object(
  { contains: Text, ignoreCase: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, description: 'the answer contains this text' },
);
const NotContains = Type.Object(
  { notContains: Text, ignoreCase: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, description: 'the answer does not contain this text' },
);
const Matches = Type.Object(
  {
    matches: Type.String({ minLength: 1, maxLength: 2000 }),
    flags: Type.Optional(Type.String({ pattern: '^[imsu]*$' })),
  },
  { additionalProperties: false, description: 'the answer matches this regular expression' },
);
const ToolCalled = Type.Object(
  {
    tool: Type.String({ minLength: 1, maxLength: 200 }),
    called: Type.Optional(Type.Boolean({ description: 'default true; false: the tool must not be called' })),
    args: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'a JSON Schema one call’s arguments must meet' }),
    ),
    min: Type.Optional(Type.Integer({ minimum: 0 })),
    max: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false, description: 'a tool was (or was not) called, with matching arguments' },
);
const MaxModelCalls = Type.Object({ maxModelCalls: Type.Integer({ minimum: 0 }) }, { additionalProperties: false });
const MaxToolCalls = Type.Object({ maxToolCalls: Type.Integer({ minimum: 0 }) }, { additionalProperties: false });
const MaxCost = Type.Object(
  { maxCost: Type.Number({ minimum: 0, description: 'USD, as the spend governor prices the calls' }) },
  { additionalProperties: false },
);
const Similar = Type.Object(
  {
    similar: Type.Object(
      {
        min: Type.Number({ minimum: 0, maximum: 1 }),
        to: Type.Optional(Type.String({ description: 'default: the recorded answer' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'word-set similarity (Jaccard) of the answer to a text' },
);
const Judge = Type.Object(
  {
    judge: Type.Object(
      {
        provider: Type.String({ minLength: 1 }),
        model: Type.String({ minLength: 1 }),
        rubric: Text,
        pass: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'lowest passing score, default 0.5' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'an LLM judge scores the answer against a rubric (its cost counted)' },
);
const Lambda = Type.Object(
  {
    lambda: Type.Object(
      {
        source: Type.String({ minLength: 1, maxLength: 100_000 }),
        fn: Type.Optional(Type.String({ pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$', description: 'default `score`' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'a scorer in the QuickJS sandbox of agent lambdas' },
);

export const Assertion = Type.Union([
  Contains,
  NotContains,
  Matches,
  ToolCalled,
  MaxModelCalls,
  MaxToolCalls,
  MaxCost,
  Similar,
  Judge,
  Lambda,
]);
export type Assertion = Static<typeof Assertion>;

export const RecordedTool = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    args: Type.Unknown(),
    result: Type.Object(
      { content: Type.String(), isError: Type.Optional(Type.Boolean()) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type RecordedTool = Static<typeof RecordedTool>;

export const EvalCase = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    input: Text,
    history: Type.Optional(
      Type.Array(
        Type.Object(
          { role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), text: Type.String() },
          { additionalProperties: false },
        ),
        { maxItems: 200, description: 'the conversation before the input, as the model saw it' },
      ),
    ),
    recorded: Type.Optional(
      Type.Object(
        {
          tools: Type.Array(RecordedTool, { maxItems: 500 }),
          answer: Type.Optional(Type.Union([Type.String(), Type.Null()])),
          modelCalls: Type.Optional(Type.Integer({ minimum: 0 })),
          cost: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
          source: Type.Optional(
            Type.Object(
              { agentId: Type.String(), agentName: Type.String(), turnId: Type.String(), at: Type.String() },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'what the turn did when it was captured; tools replay from here' },
      ),
    ),
    assert: Type.Array(Assertion, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type EvalCase = Static<typeof EvalCase>;

export const Suite = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    cases: Type.Array(EvalCase, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);
export type Suite = Static<typeof Suite>;
