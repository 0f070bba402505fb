/** Builds the root fastify instance: TypeBox provider, OpenAPI collection, guards and error mapping. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import swagger from '@fastify/swagger';
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { installErrorHandling } from './error-handler.js';
import { checkRequest, installGuards, type GuardOptions } from './guards.js';
import { AgtError } from '../../contracts/errors.js';

export type KernelApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export const API_VERSION = '0.2.0';

export interface AppOptions {
  logLevel: string;
  guard: GuardOptions;
}

const API_DESCRIPTION = [
  'agt: a headless agent runtime daemon. Every route but GET/HEAD /health needs `Authorization: Bearer <token>`',
  '(the `daemon-token` file in the data directory, or AGT_DAEMON_TOKEN).',
  'Errors are `{error, code}`; clients branch on `code`.',
  '`POST /agents/{id}/chat` and `POST /agents/{id}/trigger` take an `Idempotency-Key` header: a repeat with the',
  'same key (per agent, kept 24 h) answers the same 202 and turnId and queues nothing.',
].join(' ');

export async function buildApp(options: AppOptions): Promise<KernelApp> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      // stdout carries only the listening lines; logs go to stderr.
      stream: process.stderr,
      redact: ['req.headers.authorization', 'req.headers["x-agt-local-proof"]'],
    },
    // Bodies are small JSON documents; a larger limit is set per route where files travel.
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Ids and meta keys may be long (config allows 128-char ids); the router's default cap is 100.
    routerOptions: { maxParamLength: 512 },
    // Errors the router raises before any hook (malformed URL, over-long parameter) still pass the
    // request guard first and answer in the `{error, code}` shape.
    frameworkErrors: (error, request, reply) => {
      let refusal: AgtError;
      try {
        checkRequest(request, options.guard, undefined);
        refusal = new AgtError('bad_request', error.message);
      } catch (guardError) {
        refusal = guardError as AgtError;
      }
      void (reply as import('fastify').FastifyReply).status(refusal.statusCode).send(refusal.toBody());
    },
    forceCloseConnections: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON bodies are typed already: a number where a string belongs is a 400, never silently converted.
  // Query strings, params and headers are text on the wire and are coerced to their schema's types.
  const compilers = AjvCompiler();
  const base = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
  const bodyCompiler = compilers({}, { customOptions: { ...base, coerceTypes: false } });
  const textCompiler = compilers({}, { customOptions: { ...base, coerceTypes: 'array' } });
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? bodyCompiler(route) : textCompiler(route)));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'agt daemon API', version: API_VERSION, description: API_DESCRIPTION },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
    hideUntagged: false,
  });

  installErrorHandling(app);
  installGuards(app, options.guard);
  return app;
}
