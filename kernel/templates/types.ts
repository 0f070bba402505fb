/** Template shapes: the config a template yields, and the route schemas of the `Templates` group. */
import { Type, type Static } from 'typebox';
import type { AgentConfig } from '@agt/contracts';

/** An agent config without the fields each created agent gets for itself. */
export type TemplateConfig = Omit<AgentConfig, 'id' | 'name'>;

export const TEMPLATE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

export const TemplateSummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    builtin: Type.Boolean(),
    /** Built-ins are always reviewed; a user template when its current content was reviewed here. */
    reviewed: Type.Boolean(),
    valid: Type.Boolean(),
    /** Why it is invalid. */
    error: Type.Optional(Type.String()),
    /** sha256 of the file content (user templates); a review mark is bound to it. */
    contentHash: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type TemplateSummary = Static<typeof TemplateSummarySchema>;

export const TemplateDetailSchema = Type.Object(
  {
    ...TemplateSummarySchema.properties,
    config: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description:
        'The agent config the template yields (no id, no name); for an invalid template, what the file holds, or null',
    }),
  },
  { additionalProperties: false },
);
export type TemplateDetail = Static<typeof TemplateDetailSchema>;
