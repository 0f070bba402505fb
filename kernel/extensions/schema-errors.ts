/**
 * Human-readable TypeBox validation errors for start-up and load messages: each names the field's
 * path (`/extensions/0/module`) and, for unknown or missing properties, the property itself, because
 * "must not have additional properties" alone does not tell a user which key to fix.
 */
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';

interface ErrorLike {
  instancePath: string;
  keyword: string;
  message: string;
  params: unknown;
}

function describe(error: ErrorLike): string {
  const path = error.instancePath === '' ? '(root)' : error.instancePath;
  const params = (error.params ?? {}) as Record<string, unknown>;
  if (error.keyword === 'additionalProperties' && Array.isArray(params.additionalProperties)) {
    return params.additionalProperties
      .map((key) => `${path === '(root)' ? '' : path}/${String(key)}: unknown property`)
      .join('; ');
  }
  if (error.keyword === 'required' && Array.isArray(params.requiredProperties)) {
    return params.requiredProperties
      .map((key) => `${path === '(root)' ? '' : path}/${String(key)}: is required`)
      .join('; ');
  }
  return `${path}: ${error.message}`;
}

/** Up to `max` problems of `value` against `schema`, or null when valid. */
export function schemaProblems(schema: TSchema, value: unknown, max = 3): string | null {
  const out: string[] = [];
  for (const error of Value.Errors(schema, value) as Iterable<ErrorLike>) {
    // `additionalProperties: false` also reports each extra key as "schema is false"; the
    // additionalProperties entry already names it.
    if (error.keyword === 'boolean') continue;
    const text = describe(error);
    if (!out.includes(text)) out.push(text);
    if (out.length >= max) break;
  }
  return out.length === 0 ? null : out.join('; ');
}

/** Applies the schema's defaults to a copy of `value` (never mutates the caller's object). */
export function withDefaults(schema: TSchema, value: unknown): unknown {
  return Value.Default(schema, Value.Clone(value));
}
