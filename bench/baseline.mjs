#!/usr/bin/env node
/**
 * The benchmark's baseline: a bare fastify app with the daemon's two measured routes and the same kind
 * of work per request (JSON schemas for params and responses, a bearer check before the handler), and
 * nothing else. Plain JavaScript so it starts as the built daemon does.
 *
 * Env: PORT (default 0), TOKEN (default `bench-token`). Prints `listening on http://…` on stdout.
 */
import { timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';

const token = Buffer.from(`Bearer ${process.env.TOKEN ?? 'bench-token'}`);
const app = Fastify({ logger: false });
const nullable = (schema) => ({ anyOf: [schema, { type: 'null' }] });
const ErrorBody = {
  type: 'object',
  properties: { error: { type: 'string' }, code: { type: 'string' } },
  required: ['error', 'code'],
};

app.addHook('onRequest', async (request, reply) => {
  if (request.routeOptions.config.public) return;
  const given = Buffer.from(request.headers.authorization ?? '');
  if (given.length !== token.length || !timingSafeEqual(given, token)) {
    return reply.status(401).send({ error: 'missing or invalid bearer token', code: 'unauthorized' });
  }
});

const startedAt = Date.now();
app.get(
  '/health',
  {
    config: { public: true },
    schema: {
      response: {
        200: {
          type: 'object',
          properties: { status: { const: 'ok' }, version: { type: 'string' }, uptimeMs: { type: 'integer' } },
          required: ['status', 'version', 'uptimeMs'],
        },
        403: ErrorBody,
      },
    },
  },
  async () => ({ status: 'ok', version: '0.0.0', uptimeMs: Date.now() - startedAt }),
);

const agents = new Map([
  [
    'bench',
    {
      id: 'bench',
      filePath: null,
      name: 'bench',
      autostart: false,
      runtimeState: 'idle',
      targetState: null,
      loopCount: 0,
    },
  ],
]);
app.get(
  '/agents/:id/status',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] },
      response: {
        200: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            filePath: nullable({ type: 'string' }),
            name: { type: 'string' },
            handle: { type: 'string' },
            autostart: { type: 'boolean' },
            runtimeState: { type: 'string' },
            targetState: nullable({ type: 'string' }),
            loopCount: { type: 'integer' },
            degraded: { type: 'string' },
          },
          required: ['id', 'filePath', 'name', 'autostart', 'runtimeState', 'targetState', 'loopCount'],
        },
        404: ErrorBody,
      },
    },
  },
  async (request, reply) => {
    const agent = agents.get(request.params.id);
    if (!agent) return reply.status(404).send({ error: 'no such agent', code: 'agent_not_found' });
    return agent;
  },
);

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening on ${address}\n`);
// An orderly exit on SIGTERM, so `node --cpu-prof bench/baseline.mjs` writes its profile (request-path.ts --prof).
process.once('SIGTERM', () => process.exit(0));
