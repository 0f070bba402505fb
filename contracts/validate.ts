/**
 * Validation helpers shared by the kernel and extensions: TypeBox checks that throw a `bad_request`
 * naming the first bad field's path, and the one nesting-depth limit every JSON value passes before any
 * recursive walk (request bodies, agent configs read from files, settings, tool inputs).
 */
import type { TSchema, Static } from 'typebox';
import { Value } from 'typebox/value';
import { Compile } from 'typebox/compile';
import { invalidValue, nestsTooDeep } from './errors.js';

/**
 * How deep a JSON value may nest: at most this many arrays/objects inside one another (`{}` is 1).
 * Deeper values are refused before anything walks them recursively (400 over HTTP, 422 `load_failed`
 * with reason `invalid_config` for an agent file).
 *
 * @public
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Where `value` nests deeper than `limit` containers: the JSON pointer of the first container past the
 * limit (shortened), or null when it stays within. Iterative, so a value nested 100,000 levels deep is
 * measured without touching the stack.
 *
 * @public
 */
export function jsonDepthProblem(value: unknown, limit = MAX_JSON_DEPTH): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const stack: Array<{ value: object; depth: number; path: string }> = [{ value, depth: 1, path: '' }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (depth > limit) return path.length > 120 ? `${path.slice(0, 120)}…` : path || '(root)';
    // A value reached twice (a shared or cyclic reference, never in parsed JSON) is measured once.
    if (seen.has(current)) continue;
    seen.add(current);
    const children: Array<[string, unknown]> = Array.isArray(current)
      ? current.map((item, index) => [String(index), item])
      : Object.entries(current);
    for (const [key, child] of children) {
      if (typeof child === 'object' && child !== null) {
        stack.push({ value: child, depth: depth + 1, path: path.length > 200 ? path : `${path}/${key}` });
      }
    }
  }
  return null;
}

/**
 * Throws `bad_request` (or `code`) when `value` nests deeper than {@link MAX_JSON_DEPTH}.
 *
 * @public
 */
export function assertJsonDepth(value: unknown, what: string, code = 'bad_request'): void {
  const at = jsonDepthProblem(value);
  if (at !== null) {
    throw nestsTooDeep(what, MAX_JSON_DEPTH, at, code);
  }
}

/**
 * Compiled checks by schema object, made on a schema's second use: the agent config schema is checked
 * at every create and load (interpreted: ~0.5 ms; building its error list: ~1.2 ms; compiled: ~5 us, after
 * a ~40 ms compile), while a schema checked once (a settings file at start) is not worth compiling.
 */
const checkers = new WeakMap<TSchema, { uses: number; check?: (value: unknown) => boolean }>();

function checkerOf(schema: TSchema): (value: unknown) => boolean {
  let entry = checkers.get(schema);
  if (entry === undefined) {
    entry = { uses: 0 };
    checkers.set(schema, entry);
  }
  if (entry.check) return entry.check;
  if (++entry.uses < 2) return (value) => Value.Check(schema, value);
  const compiled = Compile(schema);
  entry.check = (value) => compiled.Check(value);
  return entry.check;
}

/**
 * The first validation error of `value` against `schema` as `path: message`, or null when valid. A
 * value nested deeper than {@link MAX_JSON_DEPTH} is an error at the path where it goes too deep.
 *
 * @public
 */
export function firstSchemaError(schema: TSchema, value: unknown): string | null {
  const tooDeep = jsonDepthProblem(value);
  if (tooDeep !== null) return `${tooDeep}: nests deeper than ${MAX_JSON_DEPTH} levels`;
  // Valid input (the usual case) is answered by a compiled check; the error list is built only for invalid input.
  if (checkerOf(schema)(value)) return null;
  for (const error of Value.Errors(schema, value)) {
    const path = error.instancePath === '' ? '(root)' : error.instancePath;
    return `${path}: ${error.message}`;
  }
  return null;
}

/**
 * Returns `value` typed, or throws `bad_request` (or the given code) naming `what` and the bad path.
 *
 * @public
 */
export function assertValid<S extends TSchema>(
  schema: S,
  value: unknown,
  what: string,
  code = 'bad_request',
): Static<S> {
  const problem = firstSchemaError(schema, value);
  if (problem !== null) throw invalidValue(what, problem, code);
  return value as Static<S>;
}
