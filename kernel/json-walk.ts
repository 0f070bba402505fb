/**
 * An iterative, depth-first walk of a JSON value in document order with early exit: the key-material
 * scanners (settings, agent configs) use it, so a value nested arbitrarily deep never overflows the
 * stack (values are also depth-limited before any walk: MAX_JSON_DEPTH in contracts/validate.ts).
 */

export interface JsonVisitor<T> {
  /** Called for every object (not array) when the walk enters it, before its entries. */
  object?(value: Record<string, unknown>, path: string): T | null;
  /** Called for every object entry (not array items) before the walk descends into its value. */
  entry?(key: string, value: unknown, path: string): T | null;
}

interface Frame {
  entries: Iterator<[string, unknown]>;
  path: string;
  array: boolean;
}

/** The first non-null visitor result, or null. `segment` turns a key or index into a path segment. */
export function findInJson<T>(
  root: unknown,
  visitor: JsonVisitor<T>,
  segment: (key: string) => string = (key) => key,
  rootPath = '',
): T | null {
  const stack: Frame[] = [];
  const enter = (value: unknown, path: string): T | null => {
    if (Array.isArray(value)) {
      stack.push({
        entries: value.map((item, index): [string, unknown] => [String(index), item]).values(),
        path,
        array: true,
      });
    } else if (value !== null && typeof value === 'object') {
      const hit = visitor.object?.(value as Record<string, unknown>, path) ?? null;
      if (hit !== null) return hit;
      stack.push({ entries: Object.entries(value)[Symbol.iterator](), path, array: false });
    }
    return null;
  };
  let hit = enter(root, rootPath);
  if (hit !== null) return hit;
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    const next = frame.entries.next();
    if (next.done) {
      stack.pop();
      continue;
    }
    const [key, value] = next.value;
    const path = `${frame.path}/${segment(key)}`;
    if (!frame.array) {
      hit = visitor.entry?.(key, value, path) ?? null;
      if (hit !== null) return hit;
    }
    hit = enter(value, path);
    if (hit !== null) return hit;
  }
  return null;
}
