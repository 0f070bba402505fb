/**
 * `hello`: the extension of agt's guide (docs/extensions.md, "Writing a third-party extension"). It serves
 * `/hello` (a list of greetings, add one, read one), greets one agent at `/agents/{id}/hello`, and offers
 * every agent the tool `hello_say`. It imports only `@agt/contracts` and `typebox`.
 */
import { AgtError, defineExtension, errorResponses } from '@agt/contracts';
import { Type } from 'typebox';

const Greeting = Type.Object({ id: Type.Integer(), text: Type.String() });

export default defineExtension({
  name: 'hello', // the manifest entry's name
  version: '1.0.0', // this extension's version (semver)
  contract: '1.0', // the kernel contract it was written for: same major, minor <= the kernel's
  prefix: '/hello', // its routes live here; GET on it lists the group's resources
  agentRoutes: 'hello', // routes under /agents/{id}/hello
  options: Type.Object({ greeting: Type.String({ default: 'hi' }) }, { additionalProperties: false }),

  register(ctx) {
    const greetings: Array<{ id: number; text: string }> = [];

    ctx.http.get(
      '/',
      {
        schema: {
          tags: ['Hello'],
          summary: 'List greetings',
          response: {
            200: Type.Object({ greeting: Type.String(), greetings: Type.Array(Greeting) }),
            ...errorResponses(),
          },
        },
      },
      async () => ({ greeting: ctx.config.greeting, greetings }),
    );

    ctx.http.post(
      '/greetings',
      {
        schema: {
          tags: ['Hello'],
          summary: 'Add a greeting',
          body: Type.Object({ text: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
          response: { 201: Greeting, ...errorResponses() },
        },
      },
      async (request, reply) => {
        const greeting = { id: greetings.length + 1, text: request.body.text };
        greetings.push(greeting);
        ctx.logger.info({ id: greeting.id }, 'greeting added');
        return reply.status(201).send(greeting);
      },
    );

    ctx.http.get(
      '/greetings/:id',
      {
        schema: {
          tags: ['Hello'],
          summary: 'Read one greeting',
          params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
          response: { 200: Greeting, ...errorResponses(404) },
        },
      },
      async (request) => {
        const greeting = greetings.find((g) => g.id === request.params.id);
        // Coded errors become {error, code} bodies with the code's status (404 here).
        if (!greeting) throw new AgtError('not_found', `no greeting ${request.params.id}`);
        return greeting;
      },
    );

    ctx.agentHttp!.get(
      '/',
      {
        schema: {
          tags: ['Hello'],
          summary: 'Greet one agent',
          params: Type.Object({ id: Type.String() }),
          response: { 200: Type.Object({ agentId: Type.String(), greeting: Type.String() }), ...errorResponses(404) },
        },
      },
      async (request) => {
        const agent = ctx.agents.find(request.params.id);
        if (!agent) throw new AgtError('not_found', `no loaded agent ${request.params.id}`);
        return { agentId: agent.id, greeting: `${ctx.config.greeting}, ${agent.name}` };
      },
    );

    // A tool offered to every agent (built-in tool names always win).
    ctx.contribute.tools({
      toolsFor: () => [
        {
          name: 'hello_say',
          description: 'Says the configured greeting',
          source: `ext:${ctx.name}`,
          inputSchema: { type: 'object', properties: {} },
          run: async () => ({ content: ctx.config.greeting }),
        },
      ],
    });

    const timer = setInterval(() => ctx.logger.debug({ count: greetings.length }, 'still here'), 60_000);
    return {
      start() {
        ctx.logger.info('hello started');
      },
      stop() {
        clearInterval(timer);
      }, // release every timer, socket and child process
    };
  },
});
