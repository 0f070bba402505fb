/**
 * Input checks every route inherits (a root `preValidation` hook, before the schema validators run):
 * - integers in query strings, path parameters and headers are decimal text in the safe-integer range:
 *   `Infinity`, `1e400`, `0x10`, `1.5`, `1e3`, ` 5` and the empty string are 400 `bad_request`, whatever
 *   Ajv's coercion would make of them (it reads `Infinity`, `0x10` and `1e3` as numbers). The rule applies
 *   to every property a route declares as `Type.Integer` (or `Type.Number`: finite decimals only), so no
 *   route repeats it;
 * - a JSON body nested deeper than MAX_JSON_DEPTH (contracts/validate.ts) is 400 before anything walks it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertJsonDepth } from '@agt/contracts';
import { notDecimal } from './errors.js';

/** A decimal integer: optional minus, no leading zeros, at most 16 digits (then also a safe integer). */
export const DECIMAL_INTEGER_PATTERN = '^-?(0|[1-9][0-9]{0,15})$';
/** A non-negative decimal integer (for string-typed headers such as `Last-Event-ID`). */
export const DECIMAL_NATURAL_PATTERN = '^(0|[1-9][0-9]{0,15})$';
const DECIMAL_INTEGER = new RegExp(DECIMAL_INTEGER_PATTERN);
const DECIMAL_NUMBER = /^-?(0|[1-9][0-9]{0,15})(\.[0-9]{1,15})?$/;

type Part = 'querystring' | 'params' | 'headers';
const PARTS: Part[] = ['querystring', 'params', 'headers'];
type NumericKind = 'integer' | 'number';
type NumericFields = Record<Part, Array<[string, NumericKind]>>;

/** `integer` / `number` when the schema (or a member of its union) takes numbers; null otherwise. */
function numericKind(schema: unknown, depth = 0): NumericKind | null {
  if (!schema || typeof schema !== 'object' || depth > 8) return null;
  const s = schema as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[]; allOf?: unknown[] };
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  for (const member of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) {
    const kind = numericKind(member, depth + 1);
    if (kind) return kind;
  }
  return null;
}

/** The numeric properties of an object schema (its `allOf` members included, for `Type.Intersect`). */
function numericProperties(
  schema: unknown,
  out: Array<[string, NumericKind]> = [],
  depth = 0,
): Array<[string, NumericKind]> {
  if (!schema || typeof schema !== 'object' || depth > 8) return out;
  const s = schema as { properties?: Record<string, unknown>; allOf?: unknown[] };
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    const kind = numericKind(property);
    if (kind) out.push([name, kind]);
  }
  for (const member of s.allOf ?? []) numericProperties(member, out, depth + 1);
  return out;
}

const fieldsBySchema = new WeakMap<object, NumericFields>();

function numericFields(schema: Record<string, unknown>): NumericFields {
  let fields = fieldsBySchema.get(schema);
  if (!fields) {
    fields = { querystring: [], params: [], headers: [] };
    for (const part of PARTS) {
      fields[part] = numericProperties(schema[part]).map(([name, kind]) => [
        part === 'headers' ? name.toLowerCase() : name,
        kind,
      ]);
    }
    fieldsBySchema.set(schema, fields);
  }
  return fields;
}

const WHERE: Record<Part, string> = { querystring: 'querystring', params: 'params', headers: 'headers' };

function valuesOf(request: FastifyRequest, part: Part): Record<string, unknown> {
  const source = part === 'querystring' ? request.query : part === 'params' ? request.params : request.headers;
  return (source && typeof source === 'object' ? source : {}) as Record<string, unknown>;
}

/** Throws 400 for a numeric text field that is not plain decimal, or out of the safe-integer range. */
export function checkNumericText(request: FastifyRequest): void {
  const schema = request.routeOptions?.schema as Record<string, unknown> | undefined;
  if (!schema) return;
  const fields = numericFields(schema);
  for (const part of PARTS) {
    if (fields[part].length === 0) continue;
    const values = valuesOf(request, part);
    for (const [name, kind] of fields[part]) {
      const raw = values[name];
      if (raw === undefined) continue;
      for (const text of Array.isArray(raw) ? raw : [raw]) {
        const pattern = kind === 'integer' ? DECIMAL_INTEGER : DECIMAL_NUMBER;
        if (
          typeof text !== 'string' ||
          !pattern.test(text) ||
          !Number.isFinite(Number(text)) ||
          (kind === 'integer' && !Number.isSafeInteger(Number(text)))
        ) {
          const shown =
            typeof text === 'string' ? JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text) : typeof text;
          throw notDecimal(part, WHERE[part], name, kind, shown);
        }
      }
    }
  }
}

/** Does a route need the hook: a numeric query/param/header field, or a body to measure? */
function needsChecks(method: string | string[], schema: Record<string, unknown> | undefined): boolean {
  const methods = Array.isArray(method) ? method : [method];
  // A body may come with any method but GET/HEAD (fastify parses none there), with or without a body schema.
  if (methods.some((m) => m !== 'GET' && m !== 'HEAD')) return true;
  if (!schema) return false;
  const fields = numericFields(schema);
  return PARTS.some((part) => fields[part].length > 0);
}

/**
 * Installed per route (from `onRoute`) on the routes that can need it, not as a root hook on every
 * request: a GET without numeric fields (health, status) skips the hook and its promise entirely.
 */
export function installInputChecks(app: FastifyInstance): void {
  const check = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
    try {
      checkNumericText(request);
      if (typeof request.body === 'object' && request.body !== null) assertJsonDepth(request.body, 'body');
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
  app.addHook('onRoute', (route) => {
    if (!needsChecks(route.method, route.schema as Record<string, unknown> | undefined)) return;
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined ? [check] : [check, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
