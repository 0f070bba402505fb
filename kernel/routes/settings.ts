/** Settings routes: read, merge, read one key, replace one key. Validated, persisted, applied. */
import { Type } from 'typebox';
import { notFound, errorResponses, SettingsSchema, type Settings } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';
import { findKeyMaterial } from '../settings.js';
import { keyMaterialRefused } from '../errors.js';

const SETTINGS_KEYS = Object.keys(SettingsSchema.properties) as Array<keyof Settings>;
const KeyParams = Type.Object({ key: Type.Union(SETTINGS_KEYS.map((k) => Type.Literal(k))) });
const AnyValue = Type.Unknown();

function refuseKeyMaterial(value: unknown): void {
  const path = findKeyMaterial(value);
  if (path) {
    throw keyMaterialRefused(path);
  }
}

export const settingsRoutes: KernelRoutes<'settings'> = async (app, { services }) => {
  const store = services.settings;
  const tags = ['Settings'];

  app.get(
    '',
    {
      schema: { tags, summary: 'The whole settings object', response: { 200: SettingsSchema, ...errorResponses() } },
    },
    async () => store.current(),
  );

  app.patch(
    '',
    {
      schema: {
        tags,
        summary: 'Merge top-level keys into the settings (a null value removes the key)',
        body: Type.Record(Type.String(), Type.Unknown()),
        response: { 200: SettingsSchema, ...errorResponses() },
      },
    },
    async (request) => {
      refuseKeyMaterial(request.body);
      const next: Record<string, unknown> = { ...store.current() };
      for (const [key, value] of Object.entries(request.body)) {
        if (value === null) delete next[key];
        else next[key] = value;
      }
      return store.replace(next);
    },
  );

  app.get(
    '/:key',
    {
      schema: {
        tags,
        summary: 'One settings key',
        params: KeyParams,
        response: { 200: Type.Object({ key: Type.String(), value: AnyValue }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const value = store.current()[request.params.key];
      if (value === undefined) throw notFound(`setting ${request.params.key} is not set`);
      return { key: request.params.key, value };
    },
  );

  app.put(
    '/:key',
    {
      schema: {
        tags,
        summary: 'Replace one settings key',
        params: KeyParams,
        body: Type.Object({ value: AnyValue }, { required: ['value'] }),
        response: { 200: Type.Object({ key: Type.String(), value: AnyValue }), ...errorResponses() },
      },
    },
    async (request) => {
      const { key } = request.params;
      refuseKeyMaterial({ [key]: request.body.value });
      const saved = store.replace({ ...store.current(), [key]: request.body.value });
      return { key, value: saved[key] };
    },
  );
};
