/**
 * Response schemas as the serializer gets them. TypeBox writes `Type.Record(Type.String(), X)`
 * as `patternProperties: {'^.*$': X}`, which fast-json-stringify serializes with a regular expression
 * literal tested per key (a new RegExp object each time): ~8% of `GET /agents/{id}/status`, whose
 * `storage.tables` holds a dozen or more keys. For the serializer only (validation and the OpenAPI
 * document keep the schema as written) such a record becomes `additionalProperties: X`: every key is
 * written with X's serializer, with no test. The one difference: `.` does not match a line break, so a key
 * holding one was dropped from the answer and is now written like any other key of the record.
 */

const RECORD_PATTERNS = new Set(['^.*$', '^(.*)$']);
/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);

export function forSerializing<T>(schema: T): T {
  return rewrite(schema, 0) as T;
}

function rewrite(node: unknown, depth: number): unknown {
  if (depth > 64 || node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => rewrite(item, depth + 1));
  const source = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    out[key] = DATA_KEYWORDS.has(key) ? value : rewrite(value, depth + 1);
  }
  const patterns = out.patternProperties as Record<string, unknown> | undefined;
  if (patterns !== null && typeof patterns === 'object' && out.additionalProperties === undefined) {
    const keys = Object.keys(patterns);
    if (keys.length === 1 && RECORD_PATTERNS.has(keys[0]!)) {
      out.additionalProperties = patterns[keys[0]!];
      delete out.patternProperties;
    }
  }
  return out;
}
