/**
 * OTLP export headers whose values the daemon keeps sealed (`ctx.secrets`, docs/observability.md) instead of
 * reading them from its environment: `PUT /metrics/otlp-headers/{name}` stores one, `DELETE` drops it, `GET`
 * lists the names. A settings `otlpHeaders` entry without `valueEnv` sends the sealed value. No value is ever
 * answered, logged or put in an event.
 */
import { Type } from 'typebox';
import { errorResponses, notFound, unavailable } from '@agt/contracts';
import type { ExtensionHttp, ExtensionSecrets } from '@agt/contracts';

/** The header names settings `telemetry.otlpHeaders` accept: the exporter owns `Host` and `Content-*`. */
const HeaderName = Type.String({ pattern: '^(?![Cc]ontent-)(?![Hh]ost$)[A-Za-z0-9_.-]{1,100}$' });
const NameParams = Type.Object({ name: HeaderName });
/** Visible ASCII, inner spaces: a value an HTTP header can carry as it is (no line breaks). */
const HeaderValue = Type.Object(
  { value: Type.String({ minLength: 1, maxLength: 4000, pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$' }) },
  { additionalProperties: false },
);
const HeaderState = Type.Object({
  name: Type.String(),
  set: Type.Boolean({ description: 'a value is sealed for it' }),
  listed: Type.Boolean({ description: 'settings `telemetry.otlpHeaders` lists it without `valueEnv`, so it is sent' }),
});

/** The store key of a header: HTTP header names are case-insensitive, so one value per lowercase name. */
const key = (name: string) => `otlp-header:${name.toLowerCase()}`;
const PREFIX = 'otlp-header:';

export interface SealedHeaders {
  /**
   * The values of `names`; `missing` names those with no value stored, `locked` those stored but unreadable
   * here (the store is sealed to keys this daemon cannot open now, such as a locked owner identity).
   */
  read(names: string[]): Promise<{ values: Record<string, string>; missing: string[]; locked: string[] }>;
}

export function sealedHeaders(secrets: ExtensionSecrets | undefined): SealedHeaders {
  return {
    async read(names) {
      const values: Record<string, string> = {};
      const missing: string[] = [];
      const locked: string[] = [];
      const stored = new Set(secrets ? await secrets.names() : []);
      for (const name of names) {
        const value = stored.has(key(name)) ? await secrets!.get(key(name)) : undefined;
        if (value) values[name] = value;
        else (stored.has(key(name)) ? locked : missing).push(name);
      }
      return { values, missing, locked };
    },
  };
}

export function registerSealedHeaderRoutes(
  http: ExtensionHttp,
  tag: string,
  secrets: ExtensionSecrets | undefined,
  listed: () => string[],
  changed: () => Promise<void>,
): void {
  const store = () => {
    if (!secrets) throw unavailable('this daemon offers no sealed store for OTLP header values');
    return secrets;
  };
  const state = async (name: string) => {
    const sealed = listed().find((n) => n.toLowerCase() === name.toLowerCase());
    return {
      name: sealed ?? name,
      set: (await store().names()).includes(key(name)),
      listed: sealed !== undefined,
    };
  };

  http.get('/otlp-headers', {
    schema: {
      tags: [tag],
      summary: 'OTLP export headers with sealed values (names only)',
      description:
        'The headers settings `telemetry.otlpHeaders` lists without `valueEnv` and those with a sealed value, each saying whether a value is set. Never a value.',
      response: { 200: Type.Object({ headers: Type.Array(HeaderState) }), ...errorResponses(503) },
    },
    handler: async () => {
      const stored = (await store().names()).filter((n) => n.startsWith(PREFIX)).map((n) => n.slice(PREFIX.length));
      const names = new Map<string, string>();
      for (const name of [...listed(), ...stored])
        if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
      return { headers: await Promise.all([...names.values()].map(state)) };
    },
  });

  http.put('/otlp-headers/:name', {
    schema: {
      tags: [tag],
      summary: 'Seal the value of an OTLP export header',
      description:
        "Stores the value sealed (`ctx.secrets`: never in settings, never answered or logged) under the header's name, any case; sent when settings `telemetry.otlpHeaders` lists the header without `valueEnv`. The exporter starts again with it.",
      params: NameParams,
      body: HeaderValue,
      response: { 200: HeaderState, ...errorResponses(503) },
    },
    handler: async (request) => {
      await store().set(key(request.params.name), request.body.value);
      await changed();
      return state(request.params.name);
    },
  });

  http.delete('/otlp-headers/:name', {
    schema: {
      tags: [tag],
      summary: 'Drop the sealed value of an OTLP export header',
      description: 'A header settings still list without `valueEnv` then stops traces until a value is set again.',
      params: NameParams,
      response: { 200: HeaderState, ...errorResponses(404, 503) },
    },
    handler: async (request) => {
      if (!(await store().delete(key(request.params.name))))
        throw notFound(`no sealed value for the OTLP header ${request.params.name}`);
      await changed();
      return state(request.params.name);
    },
  });
}
