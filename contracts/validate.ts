/** Validation helper: TypeBox check that throws a `bad_request` naming the first bad field's path. */
import type { TSchema, Static } from 'typebox';
import { Value } from 'typebox/value';
import { AgtError } from './errors.js';

/** The first validation error of `value` against `schema` as `path: message`, or null when valid. */
export function firstSchemaError(schema: TSchema, value: unknown): string | null {
  for (const error of Value.Errors(schema, value)) {
    const path = error.instancePath === '' ? '(root)' : error.instancePath;
    return `${path}: ${error.message}`;
  }
  return null;
}

/** Returns `value` typed, or throws `bad_request` (or the given code) naming `what` and the bad path. */
export function assertValid<S extends TSchema>(
  schema: S,
  value: unknown,
  what: string,
  code = 'bad_request',
): Static<S> {
  const problem = firstSchemaError(schema, value);
  if (problem !== null) throw new AgtError(code, `Invalid ${what}: ${problem}`, { details: { path: problem.split(':')[0] } });
  return value as Static<S>;
}
