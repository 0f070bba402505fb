/**
 * An ask that carries a form (`schema` on `hil.requested` and `GET /tasks`: an MCP server's elicitation,
 * docs/mcp.md "Elicitation") shown as its fields (name, title, type or choices, required, default), and in
 * `agt chat` on a terminal, filled in field by field. The answer stays what the ask routes take: the JSON
 * of the values, or `decline` / `cancel`. An ask without a form shows its question as it is (a URL
 * elicitation's question carries its link).
 */
import type { Ctx } from '../context.js';

type Schema = Record<string, unknown>;

/** One field of a form, as shown and asked. */
export interface FormField {
  name: string;
  title?: string;
  description?: string;
  type: string;
  format?: string;
  /** The allowed values (an enum, titled `oneOf` consts, or a multi-select's items). */
  choices?: unknown[];
  /** Several choices may be picked (an array of an enum). */
  multiple: boolean;
  default?: unknown;
  required: boolean;
}

/** The fields of a form's schema (an object schema's `properties`), in their order. */
export function formFields(schema: Schema | undefined): FormField[] {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, any>>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, field]) => {
    const items = field.items as Record<string, any> | undefined;
    const choices: unknown[] | undefined = Array.isArray(field.enum)
      ? field.enum
      : Array.isArray(field.oneOf)
        ? field.oneOf.map((o: { const?: unknown }) => o.const)
        : Array.isArray(items?.enum)
          ? items.enum
          : Array.isArray(items?.anyOf)
            ? items.anyOf.map((o: { const?: unknown }) => o.const)
            : undefined;
    return {
      name,
      type: typeof field.type === 'string' ? field.type : 'string',
      multiple: field.type === 'array',
      required: required.has(name),
      ...(typeof field.title === 'string' && field.title !== name ? { title: field.title } : {}),
      ...(typeof field.description === 'string' ? { description: field.description } : {}),
      ...(typeof field.format === 'string' ? { format: field.format } : {}),
      ...(choices ? { choices } : {}),
      ...(field.default !== undefined ? { default: field.default } : {}),
    };
  });
}

/** `email "Email" (string, email; required): where the invoice goes`. */
export function fieldLine(field: FormField): string {
  const kind = field.choices
    ? `${field.multiple ? 'any of' : 'one of'}: ${field.choices.map((c) => JSON.stringify(c)).join(', ')}`
    : `${field.type}${field.format ? `, ${field.format}` : ''}`;
  const extras = [field.required ? 'required' : 'optional'];
  if (field.default !== undefined) extras.push(`default ${JSON.stringify(field.default)}`);
  return `${field.name}${field.title ? ` "${field.title}"` : ''} (${kind}; ${extras.join(', ')})${field.description ? `: ${field.description}` : ''}`;
}

/**
 * What `agt approvals` and a non-interactive `agt chat` show of an ask: with a form, the question's first
 * line (who asks and why), each field on a line of its own and how to answer; else the question.
 */
export function askText(question: string, schema: Schema | undefined, id: string): string {
  const fields = formFields(schema);
  if (fields.length === 0) return question;
  const example = Object.fromEntries(
    fields.filter((f) => f.required).map((f) => [f.name, f.choices?.[0] ?? (f.type === 'string' ? '…' : 0)]),
  );
  return [
    question.split('\n')[0]!,
    ...fields.map((field) => `  - ${fieldLine(field)}`),
    `  answer: agt answer ${id} '${JSON.stringify(example)}' (or decline / cancel)`,
  ].join('\n');
}

/**
 * Asks the form's fields one by one on the terminal; the answer to send (the JSON of the values,
 * `decline` or `cancel`), or undefined when the owner answers later.
 */
export async function fillForm(
  ctx: Ctx,
  asker: string,
  question: string,
  schema: Schema,
  prompts: typeof import('@inquirer/prompts'),
): Promise<string | undefined> {
  const { select, input, checkbox } = prompts;
  const choice = await select({
    message: `${asker} asks: ${question.split('\n')[0]}`,
    choices: [
      { name: 'Fill in the form', value: 'fill' },
      { name: 'Decline', value: 'decline' },
      { name: 'Cancel', value: 'cancel' },
      { name: 'Answer later (agt approvals)', value: 'later' },
    ],
  });
  if (choice === 'later') return undefined;
  if (choice !== 'fill') return choice;
  const values: Record<string, unknown> = {};
  const LEAVE = Symbol('leave out');
  for (const field of formFields(schema)) {
    const label = `${field.title ?? field.name}${field.required ? '' : ' (optional)'}${field.description ? ` (${field.description})` : ''}`;
    if (field.choices && field.multiple) {
      const picked = await checkbox({
        message: label,
        choices: field.choices.map((c) => ({
          name: String(c),
          value: c,
          checked: Array.isArray(field.default) && field.default.includes(c),
        })),
      });
      if (picked.length > 0 || field.required) values[field.name] = picked;
      continue;
    }
    if (field.choices || field.type === 'boolean') {
      const options = field.choices ?? [true, false];
      const value = await select<unknown>({
        message: label,
        choices: [
          ...options.map((c) => ({ name: c === true ? 'yes' : c === false ? 'no' : String(c), value: c })),
          ...(field.required ? [] : [{ name: ctx.out.dim('(leave out)'), value: LEAVE }]),
        ],
        ...(field.default !== undefined ? { default: field.default } : {}),
      });
      if (value !== LEAVE) values[field.name] = value;
      continue;
    }
    const numeric = field.type === 'number' || field.type === 'integer';
    const text = await input({
      message: label,
      ...(field.default !== undefined ? { default: String(field.default) } : {}),
      validate: (value) => {
        if (value.trim() === '') return field.required ? 'required' : true;
        if (!numeric) return true;
        const n = Number(value);
        return Number.isFinite(n) && (field.type === 'number' || Number.isInteger(n))
          ? true
          : `not ${field.type === 'integer' ? 'an integer' : 'a number'}`;
      },
    });
    if (text.trim() !== '') values[field.name] = numeric ? Number(text) : text;
  }
  return JSON.stringify(values);
}
