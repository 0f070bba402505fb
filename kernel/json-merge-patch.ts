/**
 * JSON Merge Patch (RFC 7396), for `PATCH /agents/{id}/config`: an object in the patch merges key by
 * key (a `null` value removes the key), anything else (arrays included) replaces the target wholesale.
 * Iterative, so a patch nested deep cannot exhaust the stack (request bodies are depth-limited anyway).
 * The target is never modified: changed objects are copied.
 */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const root: Record<string, unknown> = isObject(target) ? { ...target } : {};
  const pending: Array<[Record<string, unknown>, Record<string, unknown>]> = [[root, patch]];
  for (let step = pending.pop(); step; step = pending.pop()) {
    const [into, from] = step;
    for (const [key, value] of Object.entries(from)) {
      if (value === null) {
        delete into[key];
      } else if (isObject(value)) {
        const existing = Object.hasOwn(into, key) ? into[key] : undefined;
        const copy: Record<string, unknown> = isObject(existing) ? { ...existing } : {};
        into[key] = copy;
        pending.push([copy, value]);
      } else {
        into[key] = value;
      }
    }
  }
  return root;
}
