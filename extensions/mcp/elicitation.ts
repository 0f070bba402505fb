/**
 * An MCP server's elicitation (`elicitation/create`) as an `ask` of the turn whose tool call it came
 * during (docs/mcp.md "Elicitation"). The question names the server, the tool and the server's message,
 * and, in form mode, each field of the requested schema (type, whether required, choices, default); the
 * owner answers in words through the usual ask routes:
 *
 * - `decline` or `cancel` (alone, any case) are the spec's two refusals;
 * - a JSON object gives the fields (`{"email": "a@b.c", "count": 3}`);
 * - a form of one field takes a plain value (`yes`, `42`, `pro`), converted to the field's type.
 *
 * The answer is checked against the schema (types, required fields, enum choices, string and number
 * bounds); one that does not fit is asked again, saying why. Defaults of fields left out are applied by
 * the SDK's client (`applyDefaults`). URL mode shows the link: any answer but a refusal accepts (the owner
 * opened it), and the call then waits for the server's completion notification (url-elicitation.ts; the
 * 2026-07-28 revision has none, so there nothing is waited for).
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';

type Params = ElicitRequest['params'];
type Field = Record<string, unknown> & {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  items?: { enum?: unknown[]; anyOf?: Array<{ const?: unknown }> };
};

const fieldsOf = (params: Params): Array<[string, Field]> =>
  params.mode === 'url' ? [] : Object.entries((params.requestedSchema?.properties ?? {}) as Record<string, Field>);
const requiredOf = (params: Params): string[] =>
  params.mode === 'url' ? [] : ((params.requestedSchema as { required?: string[] })?.required ?? []);

/** The choices of an enum field (plain `enum`, titled `oneOf` consts, or a multi-select's items). */
function choices(field: Field): unknown[] | undefined {
  if (Array.isArray(field.enum)) return field.enum;
  if (Array.isArray(field.oneOf)) return field.oneOf.map((o) => o.const);
  if (field.type === 'array' && field.items) {
    if (Array.isArray(field.items.enum)) return field.items.enum;
    if (Array.isArray(field.items.anyOf)) return field.items.anyOf.map((o) => o.const);
  }
  return undefined;
}

/** The question the owner reads. */
export function elicitationQuestion(server: string, tool: string | undefined, params: Params): string {
  const from = `MCP server ${server}${tool ? ` (during tool ${tool})` : ''}`;
  if (params.mode === 'url')
    return [
      `${from} asks you to open a link: ${params.message}`,
      `Link: ${params.url}`,
      'Open it in a browser, then answer "done" (or "decline" / "cancel").',
    ].join('\n');
  const required = new Set(requiredOf(params));
  const lines = [`${from} asks: ${params.message}`];
  const fields = fieldsOf(params);
  for (const [name, field] of fields) {
    const options = choices(field);
    const kind = options
      ? `${field.type === 'array' ? 'any of' : 'one of'}: ${options.map((o) => JSON.stringify(o)).join(', ')}`
      : `${field.type ?? 'string'}${field.format ? `, ${field.format}` : ''}`;
    const extras = [
      required.has(name) ? 'required' : 'optional',
      field.default !== undefined ? `default ${JSON.stringify(field.default)}` : '',
    ].filter(Boolean);
    const label = field.title && field.title !== name ? ` "${field.title}"` : '';
    lines.push(`- ${name}${label} (${kind}; ${extras.join(', ')})${field.description ? `: ${field.description}` : ''}`);
  }
  lines.push(
    fields.length === 1
      ? 'Answer with the value (or a JSON object of the fields), or "decline" / "cancel".'
      : 'Answer with a JSON object of the fields, or "decline" / "cancel".',
  );
  return lines.join('\n');
}

/** `decline` or `cancel` when the owner's words are one of the spec's two refusals. */
export function refusalOf(text: string): 'decline' | 'cancel' | undefined {
  const word = text.trim().toLowerCase();
  return word === 'decline' || word === 'cancel' ? word : undefined;
}

/** The spec's answer to the owner's words, or why they do not fit (then the owner is asked again). */
export function elicitationAnswer(params: Params, text: string): { result: ElicitResult } | { problem: string } {
  const refusal = refusalOf(text);
  if (refusal) return { result: { action: refusal } };
  if (params.mode === 'url') return { result: { action: 'accept' } };
  const fields = fieldsOf(params);
  let given: Record<string, unknown>;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) given = parsed as Record<string, unknown>;
  else if (fields.length === 1) given = { [fields[0]![0]]: text.trim() };
  else if (fields.length === 0) given = {};
  else return { problem: 'the answer is not a JSON object of the fields' };

  const content: Record<string, string | number | boolean | string[]> = {};
  for (const [name, field] of fields) {
    if (!(name in given) || given[name] === null || given[name] === '') continue;
    const value = convert(field, given[name]);
    if (typeof value === 'object' && value !== null && 'problem' in value)
      return { problem: `${name}: ${value.problem}` };
    content[name] = value as string | number | boolean | string[];
  }
  const unknown = Object.keys(given).filter((key) => !fields.some(([name]) => name === key));
  if (unknown.length > 0) return { problem: `no field named ${unknown.join(', ')}` };
  const missing = requiredOf(params).filter(
    (name) => !(name in content) && fieldsOf(params).some(([n, f]) => n === name && f.default === undefined),
  );
  if (missing.length > 0) return { problem: `missing required ${missing.join(', ')}` };
  return { result: { action: 'accept', content } };
}

function convert(field: Field, value: unknown): unknown {
  const options = choices(field);
  if (field.type === 'array') {
    const list = Array.isArray(value)
      ? value
      : String(value)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
    if (options && list.some((item) => !options.includes(item)))
      return { problem: `choose among ${options.map((o) => JSON.stringify(o)).join(', ')}` };
    return list.map(String);
  }
  if (field.type === 'boolean') {
    if (typeof value === 'boolean') return value;
    const word = String(value).trim().toLowerCase();
    if (['true', 'yes', 'y', '1', 'on'].includes(word)) return true;
    if (['false', 'no', 'n', '0', 'off'].includes(word)) return false;
    return { problem: 'answer yes or no' };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const number = typeof value === 'number' ? value : Number(String(value).trim());
    if (!Number.isFinite(number) || (field.type === 'integer' && !Number.isInteger(number)))
      return { problem: `not ${field.type === 'integer' ? 'an integer' : 'a number'}` };
    if (field.minimum !== undefined && number < field.minimum) return { problem: `at least ${field.minimum}` };
    if (field.maximum !== undefined && number > field.maximum) return { problem: `at most ${field.maximum}` };
    return number;
  }
  const text = String(value);
  if (options && !options.includes(text))
    return { problem: `choose one of ${options.map((o) => JSON.stringify(o)).join(', ')}` };
  if (field.minLength !== undefined && text.length < field.minLength)
    return { problem: `at least ${field.minLength} characters` };
  if (field.maxLength !== undefined && text.length > field.maxLength)
    return { problem: `at most ${field.maxLength} characters` };
  return text;
}
