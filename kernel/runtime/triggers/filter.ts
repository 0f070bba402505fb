/**
 * Trigger `filter`: a shallow match on the fields of `event.data`.
 *
 * Every key of the filter must match the field of the same name in `event.data`:
 * - a scalar or object filter value matches when the field is equal to it (deep JSON equality);
 * - an array filter value matches when the field equals any of its items (one-of);
 * - `null` matches a field that is null or missing.
 * Keys may use dots to reach one level deeper per dot (`"message.source": "mesh"`). An empty or absent
 * filter matches everything; when `event.data` is not an object, only an empty filter matches.
 */

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function pick(data: unknown, path: string): unknown {
  let current = data;
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

export function matchesFilter(filter: Record<string, unknown> | undefined, data: unknown): boolean {
  if (!filter) return true;
  const keys = Object.keys(filter);
  if (keys.length === 0) return true;
  if (typeof data !== 'object' || data === null) return false;
  return keys.every((key) => {
    const want = filter[key];
    const have = pick(data, key);
    if (want === null) return have === null || have === undefined;
    if (Array.isArray(want)) return want.some((item) => deepEqual(item, have));
    return deepEqual(want, have);
  });
}
