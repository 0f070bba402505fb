/**
 * Templates routes (tag `Templates`, docs/templates.md): list and read the built-in and user templates, and review a
 * user template on this machine. Every route needs a ready owner identity (else 409
 * `identity_not_ready`), since templates are what agents are created from.
 */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { requireReadyIdentity } from '../identity/index.js';
import type { KernelRoutes } from './plugin.js';
import { templateStore } from '../templates/resolve.js';
import { TemplateDetailSchema, TemplateSummarySchema, type TemplateDetail } from '../templates/types.js';
import { templateNotFound } from '../templates/errors.js';

const TAGS = ['Templates'];
const Params = Type.Object({ templateId: Type.String({ minLength: 1, maxLength: 128 }) });

const summary = ({ config: _config, ...rest }: TemplateDetail) => rest;

export const templateRoutes: KernelRoutes<'dataDir' | 'settings' | 'logger' | 'identity'> = async (
  app,
  { services },
) => {
  const store = templateStore(services);
  store.ensureDir();

  app.get(
    '',
    {
      schema: {
        tags: TAGS,
        summary: 'List templates: built-in `standard` and the user templates in <dataDir>/templates',
        response: { 200: Type.Object({ templates: Type.Array(TemplateSummarySchema) }), ...errorResponses(409) },
      },
    },
    async () => {
      requireReadyIdentity(services, 'listing templates');
      return { templates: store.list().map(summary) };
    },
  );

  app.get(
    '/:templateId',
    {
      schema: {
        tags: TAGS,
        summary: 'One template with its config and review state',
        params: Params,
        response: { 200: TemplateDetailSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      requireReadyIdentity(services, 'reading templates');
      const template = store.get(request.params.templateId);
      if (!template) throw templateNotFound(request.params.templateId);
      return template;
    },
  );

  app.post(
    '/:templateId/review',
    {
      schema: {
        tags: TAGS,
        summary: 'Mark the current content of a user template reviewed on this machine (editing the file voids it)',
        description: 'Built-in templates are always reviewed. An invalid template answers 422 `template_invalid`.',
        params: Params,
        response: { 200: TemplateSummarySchema, ...errorResponses(404, 409, 422) },
      },
    },
    async (request) => {
      requireReadyIdentity(services, 'reviewing templates');
      return summary(store.review(request.params.templateId));
    },
  );

  app.delete(
    '/:templateId/review',
    {
      schema: {
        tags: TAGS,
        summary: 'Withdraw the review mark of a user template',
        params: Params,
        response: { 200: TemplateSummarySchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      requireReadyIdentity(services, 'reviewing templates');
      return summary(store.unreview(request.params.templateId));
    },
  );
};
