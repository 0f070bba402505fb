/**
 * The project's one canonical JSON: RFC 8785 (JSON Canonicalization Scheme, JCS), the bytes every
 * signature over JSON covers (mesh envelopes and cards), and the strict reader signed JSON that comes
 * from outside goes through before anything checks it.
 *
 * Canonical form ({@link canonicalJson}): no whitespace; object members sorted by their names' UTF-16
 * code units; strings as `JSON.stringify` writes them (RFC 8785 §3.2.2.2: the short escapes, lowercase
 * `\u00xx` for other controls, everything else as is); numbers as ECMAScript's Number::toString, which
 * RFC 8785 §3.2.2.3 adopts and `JSON.stringify` implements (`-0` is `0`, `1e21` is `1e+21`, `5e-7` stays
 * `5e-7`). Only I-JSON values have one: a non-finite number, a string with a lone surrogate, a value that
 * is not JSON (undefined in an array, a bigint, a function, a Date or any non-plain object) or nesting
 * deeper than {@link MAX_JSON_DEPTH} is refused with a `bad_request` AgtError, never written the way
 * `JSON.stringify` would (it writes Infinity as `null`, so `1e400` and `null` would sign alike). An object
 * member whose value is `undefined` is left out, as if absent (objects built in code with optional fields).
 *
 * Strict reading ({@link parseStrictJson}): `JSON.parse` keeps the last of two equal member names and
 * reads `1e400` as Infinity, so a signature could be checked over a value other than the one a second
 * reader sees. The strict reader refuses both, refuses a `__proto__` member (as fastify's default body
 * parser does) and too deep nesting, before any recursive walk.
 *
 * Both are iterative: nothing here recurses, so no input reaches the call stack's limit.
 */
import { AgtError } from './errors.js';
import { MAX_JSON_DEPTH } from './validate.js';

/**
 * 400 `bad_request` for a value or text that has no canonical form, saying why.
 *
 * @public
 */
export const notCanonical = (why: string) => new AgtError('bad_request', `not canonical JSON (RFC 8785): ${why}`);

const LONE_SURROGATE = /\p{Surrogate}/u;

function stringText(value: string): string {
  if (LONE_SURROGATE.test(value)) throw notCanonical('a string holds a lone UTF-16 surrogate');
  return JSON.stringify(value);
}

function scalarText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return stringText(value);
    case 'number':
      if (!Number.isFinite(value)) throw notCanonical(`${value} is not a finite number`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      if (value === null) return 'null';
      throw notCanonical(`${typeof value} is not a JSON value`);
  }
}

/** A plain object of any realm: its prototype is null or a prototype whose own prototype is null. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

type Frame =
  | { array: readonly unknown[]; keys: null; index: number }
  | { object: Record<string, unknown>; keys: string[]; index: number };

/**
 * The RFC 8785 canonical text of `value` (see the module comment). Throws `bad_request` for a value that
 * has none. Sign and verify the UTF-8 bytes of this text.
 *
 * @public
 */
export function canonicalJson(value: unknown, maxDepth = MAX_JSON_DEPTH): string {
  const parts: string[] = [];
  const stack: Frame[] = [];
  const write = (item: unknown) => {
    if (item === null || typeof item !== 'object') {
      parts.push(scalarText(item));
      return;
    }
    // Also ends a cyclic value: a cycle nests without end.
    if (stack.length >= maxDepth) throw notCanonical(`nests deeper than ${maxDepth} levels`);
    if (Array.isArray(item)) {
      parts.push('[');
      stack.push({ array: item, keys: null, index: 0 });
      return;
    }
    if (!isPlainObject(item))
      throw notCanonical(`a ${item.constructor?.name ?? 'non-plain'} object is not a JSON value`);
    const object = item as Record<string, unknown>;
    // The default sort compares UTF-16 code units, the order RFC 8785 §3.2.3 asks for.
    const keys = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort();
    parts.push('{');
    stack.push({ object, keys, index: 0 });
  };
  write(value);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.keys === null) {
      if (frame.index === frame.array.length) {
        parts.push(']');
        stack.pop();
        continue;
      }
      if (frame.index > 0) parts.push(',');
      write(frame.array[frame.index++]);
    } else {
      if (frame.index === frame.keys.length) {
        parts.push('}');
        stack.pop();
        continue;
      }
      if (frame.index > 0) parts.push(',');
      const key = frame.keys[frame.index++]!;
      parts.push(stringText(key), ':');
      write(frame.object[key]);
    }
  }
  return parts.join('');
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index just past the string token that starts (with its quote) at `start` of valid JSON `text`. */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const code = text.charCodeAt(index);
    if (code === BACKSLASH) index += 2;
    else if (code === QUOTE) return index + 1;
    else index++;
  }
}

const isNumberChar = (code: number) =>
  (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2d || code === 0x2e || code === 0x45 || code === 0x65;

/**
 * `text` parsed as JSON, refusing (400 `bad_request`) what `JSON.parse` would accept but hide: a member
 * name twice in one object (compared after unescaping, so `"a"` and `"\u0061"` are one name), a number
 * out of the finite range (`1e400`, `-1e400`), a lone surrogate, a `__proto__` member, and nesting deeper
 * than `maxDepth` containers. Bad syntax is 400 too. `JSON.parse` (iterative in V8) checks the syntax;
 * one pass over the now well-formed text then checks the rest without recursion.
 *
 * @public
 */
export function parseStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgtError('bad_request', `the body is not valid JSON: ${(error as Error).message}`);
  }
  // Per open container: the member names seen so far (objects) or null (arrays).
  const open: Array<Set<string> | null> = [];
  let expectName = false;
  for (let index = 0; index < text.length; ) {
    const code = text.charCodeAt(index);
    if (code === 0x7b || code === 0x5b) {
      if (open.length >= maxDepth) throw notCanonical(`nests deeper than ${maxDepth} levels`);
      open.push(code === 0x7b ? new Set() : null);
      expectName = code === 0x7b;
      index++;
    } else if (code === 0x7d || code === 0x5d) {
      open.pop();
      index++;
    } else if (code === 0x2c) {
      expectName = open[open.length - 1] != null;
      index++;
    } else if (code === QUOTE) {
      const end = stringEnd(text, index);
      const token = text.slice(index, end);
      // Only an escape can make a lone surrogate or hide a name: decode those, take the rest as is.
      const decoded = token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
      if (LONE_SURROGATE.test(decoded)) throw notCanonical('a string holds a lone UTF-16 surrogate');
      if (expectName) {
        const names = open[open.length - 1]!;
        if (names.has(decoded))
          throw notCanonical(`the member name ${JSON.stringify(decoded.slice(0, 100))} appears twice in one object`);
        if (decoded === '__proto__') throw notCanonical('a member named __proto__ is refused');
        names.add(decoded);
        expectName = false;
      }
      index = end;
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      // A number starts with '-' or a digit (the `e` of `true` or `false` is no number).
      let end = index + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const token = text.slice(index, end);
      if (!Number.isFinite(Number(token)))
        throw notCanonical(`the number ${token.slice(0, 40)} is outside the finite range`);
      index = end;
    } else {
      index++;
    }
  }
  return value;
}
