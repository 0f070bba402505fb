/** Runtime diagnostics: which extensions this daemon runs, and why any of them does not. */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { extensionNotInManifest } from '../extensions/errors.js';
import { switchExtension } from '../extensions/switch.js';
import type { KernelRoutes } from './plugin.js';

export const ExtensionRow = Type.Object({
  name: Type.String(),
  version: Type.Union([Type.String(), Type.Null()], {
    description: 'From the definition; null when it could not be read',
  }),
  enabled: Type.Boolean({ description: 'As the manifest says' }),
  loaded: Type.Boolean({ description: 'Registered and serving its routes' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it failed (also in the 503 bodies of its routes)',
  }),
  errorCode: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'Stable code of the failure: `contract_incompatible` (built against a contract this kernel does not implement), else `extension_failed`',
    }),
  ),
  prefix: Type.Union([Type.String(), Type.Null()], {
    description: "Route prefix; GET on it lists the group's resources",
  }),
  dependsOn: Type.Array(Type.String()),
  module: Type.String({ description: "The manifest's `module`" }),
  state: Type.Optional(
    Type.Union(
      [
        Type.Literal('disabled'),
        Type.Literal('pending'),
        Type.Literal('loaded'),
        Type.Literal('started'),
        Type.Literal('failed'),
        Type.Literal('stopped'),
      ],
      { description: 'disabled (manifest), loaded (registered), started, failed (see error), stopped (shutdown)' },
    ),
  ),
  agentRoutes: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: 'Segment of its agent routes: /agents/{id}/<segment>' }),
  ),
  problem: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'What the running extension cannot do now and what to do about it (a port in use, an engine not reachable); null when all is well',
    }),
  ),
});

const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });

export const runtimeRoutes: KernelRoutes<'extensions'> = async (app, { services }) => {
  app.get(
    '/extensions',
    {
      schema: {
        tags: ['Runtime'],
        summary: 'Every extension of the manifest: enabled, loaded, and the error that stopped it',
        response: { 200: Type.Object({ extensions: Type.Array(ExtensionRow) }), ...errorResponses() },
      },
    },
    async () => ({ extensions: services.extensions.status() }),
  );

  app.get(
    '/extensions/:name',
    {
      schema: {
        tags: ['Runtime'],
        summary: "One extension's status",
        params: NameParams,
        response: { 200: ExtensionRow, ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = services.extensions.status().find((e) => e.name === request.params.name);
      if (!row) throw extensionNotInManifest(request.params.name);
      return row;
    },
  );

  app.patch(
    '/extensions/:name',
    {
      schema: {
        tags: ['Runtime'],
        summary: 'Turn an extension off (at once) or on (at the next start); the choice is kept in the data directory',
        description:
          '`enabled: false`: its `stop` runs, what it contributed is withdrawn and its routes answer 503 `unavailable`; 409 while a running extension depends on it. ' +
          "`enabled: true`: a running one stays; another loads at the next start of the daemon (`restartRequired: true`: the server's routes are fixed once it listens). " +
          "Kept in the data directory's `extensions.config.json` over the manifest (which is never written).",
        params: NameParams,
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            ...ExtensionRow.properties,
            restartRequired: Type.Boolean({ description: 'kept, but it loads only at the next start of the daemon' }),
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const { restartRequired } = await switchExtension(services.extensions, request.params.name, request.body.enabled);
      const row = services.extensions.status().find((e) => e.name === request.params.name)!;
      return { ...row, restartRequired };
    },
  );
};
