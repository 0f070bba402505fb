/** The channels extension's coded errors. */
import { AgtError, badRequest, notFound } from '@agt/contracts';

export const agentNotLoaded = (id: string) => notFound(`agent ${id} is not loaded`);
export const unknownAdapterType = (type: string, installed: string[]) =>
  notFound(`no adapter type "${type}" is installed (installed: ${installed.join(', ') || 'none'})`);
export const adapterNotConfigured = (agentId: string, type: string) =>
  notFound(`agent ${agentId} has no ${type} adapter configured`);
export const invalidAdapterConfig = (problem: string) =>
  new AgtError('bad_request', `Invalid adapter config: ${problem}`, { details: { path: problem.split(':')[0] } });
export const badAddress = (address: string) => badRequest(`"${address}" is not an adapter address (<type>:<chat id>)`);
export const duplicateAdapterType = (type: string) => new Error(`adapter type "${type}" is already registered`);
export const malformedAdapterType = (type: unknown) =>
  new Error(`adapter type "${String(type)}" is not a valid adapter type (name, credentials, limits, create)`);
