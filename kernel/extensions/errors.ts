/**
 * The coded errors of the extension host, one factory per meaning (the model is fastify's
 * `lib/errors.js`). Codes, messages and details are API.
 */
import { AgtError } from '@agt/contracts';

export { extensionUnavailable } from '@agt/contracts';

/** 404 `not_found`: `GET /runtime/extensions/{name}` for a name the manifest does not list. */
export const extensionNotInManifest = (name: string) =>
  new AgtError('not_found', `no extension named ${name} in the manifest`);

/** 503 `unavailable`: the agent locator did not answer in time. */
export const locatorTimedOut = (owner: string, ms: number) =>
  new AgtError('unavailable', `the agent locator of extension ${owner} did not answer within ${ms} ms`);

/** 503 `unavailable`: the agent locator threw or rejected. */
export const locatorFailed = (owner: string, reason: string, cause: unknown) =>
  new AgtError('unavailable', `the agent locator of extension ${owner} failed: ${reason}`, { cause });

/** 503 `unavailable`: the agent locator answered something that is not a list of paths. */
export const locatorAnswerInvalid = (owner: string) =>
  new AgtError('unavailable', `the agent locator of extension ${owner} did not return a list of paths`);
