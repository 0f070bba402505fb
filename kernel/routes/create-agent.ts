/** `POST /agents/create` (tag `Agents`): the checks and the create order live in kernel/agents/create-agent.ts. */
import { errorResponses } from '@agt/contracts';
import { createAgent, CreateBody, CreateReply } from '../agents/create-agent.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Agents'];

export const createAgentRoutes: KernelRoutes<
  | 'runtime'
  | 'bus'
  | 'contributions'
  | 'registry'
  | 'dataDir'
  | 'settings'
  | 'logger'
  | 'identity'
  | 'agentIdentity'
  | 'credentials'
> = async (app, { services }) => {
  app.post(
    '/create',
    {
      // The body is optional: `curl -X POST /agents/create` creates a standard agent with a generated name.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: TAGS,
        summary:
          'Create an agent file from a template, seal its identity, mark it reviewed, track its folder and load it',
        description:
          'Refusals, in the order checked: 409 `identity_not_ready` (with `identity`); 400 `bad_request` (name, directory not absolute / ' +
          'missing / not a directory, unknown provider, unknown body field); 422 `template_missing`, `template_invalid`, `template_unreviewed`; ' +
          '400 `password_required` (the template sets `security.password_required: true` and no `password` came); 403 `wrong_password` ' +
          '(`passwordConfirm` differs from `password`); 409 `name_taken` (`<slug>.agt` exists in the directory); 422 `load_failed` ' +
          '(the file was created and stays; body carries `agentId` and `filePath`). The file is `<slug of name>.agt`.',
        body: CreateBody,
        response: { 201: CreateReply, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await createAgent(services, request.body)),
  );
};
