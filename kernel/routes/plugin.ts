/** The shape of a kernel route group: a fastify plugin registered under its prefix with the kernel's services. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { KernelServices } from '../services.js';

export interface RouteOptions {
  services: KernelServices;
}

export type KernelRoutes = FastifyPluginAsync<RouteOptions, RawServerDefault, TypeBoxTypeProvider>;
