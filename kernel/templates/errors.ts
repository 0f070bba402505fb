/**
 * The coded errors of templates, one factory per meaning (the model is fastify's `lib/errors.js`).
 * Statuses come from `ERROR_STATUS` in `contracts/errors.ts`; codes, messages and details are API.
 */
import { AgtError } from '@agt/contracts';

/** 404 `not_found`: no built-in or user template has this id. */
export const templateNotFound = (id: string) => new AgtError('not_found', `no template "${id}"`);

/** 409 `conflict`: built-in templates cannot lose their review mark. */
export const builtinAlwaysReviewed = (id: string) =>
  new AgtError('conflict', `built-in template "${id}" is always reviewed`);

/** 422 `template_invalid`: an invalid template cannot be marked reviewed. */
export const templateInvalidForReview = (id: string, error: string | undefined) =>
  new AgtError('template_invalid', `template "${id}" is invalid and cannot be reviewed: ${error}`, {
    details: { templateId: id },
  });

/** 422 `template_missing`: a new agent names a template that does not exist. */
export const templateMissing = (id: string) =>
  new AgtError('template_missing', `template "${id}" does not exist`, { details: { templateId: id } });

/** 422 `template_invalid`: a new agent names a template that does not parse (`error` says why). */
export const templateInvalid = (id: string, error: string | undefined) =>
  new AgtError('template_invalid', `template "${id}" is invalid: ${error ?? 'no config'}`, {
    details: { templateId: id },
  });

/** 422 `template_invalid`: the template, filled in for a new agent, is not a valid agent config. */
export const templateYieldsInvalidConfig = (id: string, problem: string) =>
  new AgtError('template_invalid', `template "${id}" does not yield a valid agent config: ${problem}`, {
    details: { templateId: id },
  });

/** 422 `template_unreviewed`: a user template must be reviewed on this machine before agents use it. */
export const templateUnreviewed = (id: string) =>
  new AgtError(
    'template_unreviewed',
    `template "${id}" has not been reviewed on this machine (POST /templates/${id}/review)`,
    {
      details: { templateId: id },
    },
  );
