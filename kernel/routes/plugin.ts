/** The shape of a kernel route group: a fastify plugin registered under its prefix with the kernel's services. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { KernelServices } from '../services.js';

/**
 * What a route group is handed: the services it declares (`KernelRoutes<'registry' | 'runtime'>`), a typed
 * Pick of the kernel's bag, so each group says what it reaches. Without a list it gets all of them.
 */
export interface RouteOptions<Uses extends keyof KernelServices = keyof KernelServices> {
  services: Pick<KernelServices, Uses>;
}

export type KernelRoutes<Uses extends keyof KernelServices = keyof KernelServices> = FastifyPluginAsync<
  RouteOptions<Uses>,
  RawServerDefault,
  TypeBoxTypeProvider
>;
