/**
 * `GET|PUT|PATCH /runtime/extensions/{name}/config`: an extension's options, changed in the data
 * directory's overlay over the manifest (the manifest is never written). See `extensions/extension-config.ts`.
 */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { ExtensionConfigs } from '../extensions/extension-config.js';
import type { KernelRoutes } from './plugin.js';

const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const Config = Type.Record(Type.String(), Type.Unknown());

const View = Type.Object({
  name: Type.String(),
  config: Config,
  source: Type.Union([Type.Literal('overlay'), Type.Literal('manifest')], {
    description:
      "`overlay`: `config` is the owner's, from the data directory's `extensions.config.json`; `manifest`: as shipped",
  }),
  effective: Type.Unknown({
    description:
      'what the extension runs with: `config` validated, defaults applied (null when the module cannot be read)',
  }),
  schema: Type.Unknown({ description: "the extension's options schema (JSON Schema), or null" }),
  reconfigurable: Type.Boolean({
    description: 'true: a change applies at once (the extension runs and implements `reconfigure`)',
  }),
});

const Changed = Type.Object({
  ...View.properties,
  applied: Type.Boolean({ description: 'the running extension applied the change' }),
  restartRequired: Type.Boolean({ description: 'persisted, but applies at the next start of the daemon' }),
});

export const extensionConfigRoutes: KernelRoutes<'extensions'> = async (app, { services }) => {
  const configs = new ExtensionConfigs(services.extensions);
  const description =
    "Validated against the extension's options schema (400 naming the field), applied by its `reconfigure` hook when it runs and has one " +
    "(422 `reconfigure_failed` when it refuses, 504 `timeout` when it takes over 10 s: nothing is saved), and persisted in the data directory's `extensions.config.json` (the manifest is never written). " +
    "Otherwise persisted and answered `restartRequired: true`. 409 when the extension's module cannot be read.";

  app.get(
    '/extensions/:name/config',
    {
      schema: {
        tags: ['Runtime'],
        summary: "An extension's options: as written, as in force, and their schema",
        params: NameParams,
        response: { 200: View, ...errorResponses(404) },
      },
    },
    async (request) => configs.view(request.params.name),
  );

  app.put(
    '/extensions/:name/config',
    {
      schema: {
        tags: ['Runtime'],
        summary: "Replace an extension's options",
        description,
        params: NameParams,
        body: Config,
        response: { 200: Changed, ...errorResponses(400, 404, 409, 422, 504) },
      },
    },
    async (request) => configs.change(request.params.name, request.body, { patch: false }),
  );

  app.patch(
    '/extensions/:name/config',
    {
      schema: {
        tags: ['Runtime'],
        summary: "Change part of an extension's options (JSON Merge Patch)",
        description,
        params: NameParams,
        body: Config,
        response: { 200: Changed, ...errorResponses(400, 404, 409, 422, 504) },
      },
    },
    async (request) => configs.change(request.params.name, request.body, { patch: true }),
  );
};
