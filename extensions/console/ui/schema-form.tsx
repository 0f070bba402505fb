/**
 * A form generated from a JSON Schema (the agent config's, as the daemon publishes it in `GET /openapi.json`
 * for `PUT /agents/{id}/config`): the top-level settings of a simple type, then one fieldset per top-level
 * object with its settings of a simple type. A field per kind: text (a long text as a text area), number, yes/no,
 * a choice (an `enum` or a union of constants), a list of words (an array of strings, comma-separated); a
 * nullable value is cleared by emptying its field. The rest (deeper objects, lists of objects) stays in the JSON
 * view, and the form says how many settings that leaves there. Descriptions are the hints.
 */
import { api } from './api.js';
import { fieldWord } from './words.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  items?: Schema;
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  readOnly?: boolean;
  required?: string[];
  $ref?: string;
}

let configSchema: Promise<Schema> | undefined;
/** The body schema of `PUT /agents/{id}/config` from the daemon's OpenAPI document (fetched once a page). */
export function agentConfigSchema(): Promise<Schema> {
  configSchema ??= api<any>('GET', '/openapi.json').then((doc) => {
    const schema = doc?.paths?.['/agents/{id}/config']?.put?.requestBody?.content?.['application/json']?.schema;
    if (!schema?.properties) throw new Error('the OpenAPI document has no schema for PUT /agents/{id}/config');
    return deref(schema, doc) as Schema;
  });
  configSchema.catch(() => (configSchema = undefined));
  return configSchema;
}

/** Resolves the document's local `$ref`s (`#/components/schemas/…`) down to the depth the form shows. */
function deref(node: unknown, doc: any, depth = 0): unknown {
  if (!node || typeof node !== 'object' || depth > 6) return node;
  const ref = (node as Schema).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/'))
    return deref(
      ref
        .slice(2)
        .split('/')
        .reduce((at, key) => at?.[key], doc),
      doc,
      depth + 1,
    );
  if (Array.isArray(node)) return node.map((item) => deref(item, doc, depth + 1));
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, deref(value, doc, depth + 1)]));
}

type Kind =
  | { kind: 'text'; long: boolean }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  | { kind: 'choice'; options: string[] }
  | { kind: 'words' };
interface Field {
  kind: Kind;
  nullable: boolean;
}

/** The field a schema is shown as, or null when it is not a simple value. */
export function fieldOf(schema: Schema): Field | null {
  const branches = schema.anyOf ?? [schema];
  const nullable = branches.some((b) => b.type === 'null' || (Array.isArray(b.type) && b.type.includes('null')));
  const rest = branches.filter((b) => b.type !== 'null');
  const constants = rest.flatMap((b) => (b.const !== undefined ? [b.const] : Array.isArray(b.enum) ? b.enum : []));
  if (constants.length && constants.length === rest.reduce((n, b) => n + (b.enum?.length ?? 1), 0))
    return { kind: { kind: 'choice', options: constants.map(String) }, nullable };
  if (rest.length !== 1) return null;
  const one = rest[0]!;
  const type = Array.isArray(one.type) ? one.type.find((t) => t !== 'null') : one.type;
  if (type === 'string') return { kind: { kind: 'text', long: !one.maxLength || one.maxLength > 500 }, nullable };
  if (type === 'number' || type === 'integer')
    return { kind: { kind: 'number', integer: type === 'integer' }, nullable };
  if (type === 'boolean') return { kind: { kind: 'boolean' }, nullable };
  if (type === 'array' && one.items?.type === 'string' && !one.items.enum) return { kind: { kind: 'words' }, nullable };
  return null;
}

function SchemaField({
  path,
  schema,
  field,
  value,
  onChange,
  idPrefix,
  required,
}: {
  required?: boolean;
  idPrefix: string;
  path: string[];
  schema: Schema;
  field: Field;
  value: Json | undefined;
  onChange: (path: string[], value: Json | undefined) => void;
}) {
  const id = `${idPrefix}-${path.join('-')}`;
  const label = fieldWord(path[path.length - 1]!);
  const hint = schema.description ? `${id}-hint` : undefined;
  const k = field.kind;
  const empty = field.nullable ? null : undefined;
  const hintNode = hint && (
    <small id={hint} class="hint">
      {schema.description}
    </small>
  );
  if (k.kind === 'boolean')
    return (
      <div class="check">
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          disabled={schema.readOnly}
          aria-describedby={hint}
          onChange={(e) => onChange(path, (e.currentTarget as HTMLInputElement).checked)}
        />
        <label for={id}>{label}</label>
        {hintNode}
      </div>
    );
  const common = { id, disabled: schema.readOnly, required, 'aria-describedby': hint };
  return (
    <div class={k.kind === 'text' && k.long ? 'wide' : undefined}>
      <label for={id} title={path.join('.')}>
        {label}
      </label>
      {k.kind === 'choice' ? (
        <select
          {...common}
          value={value === null || value === undefined ? '' : String(value)}
          onChange={(e) => {
            const raw = (e.currentTarget as HTMLSelectElement).value;
            onChange(path, raw === '' ? empty : raw);
          }}
        >
          <option value="">{field.nullable ? '(none)' : '(not set)'}</option>
          {k.options.map((option) => (
            <option value={option}>{option}</option>
          ))}
        </select>
      ) : k.kind === 'number' ? (
        <input
          {...common}
          type="number"
          step={k.integer ? 1 : 'any'}
          min={schema.minimum}
          max={schema.maximum}
          value={typeof value === 'number' ? String(value) : ''}
          onInput={(e) => {
            const raw = (e.currentTarget as HTMLInputElement).value;
            onChange(path, raw === '' ? empty : Number(raw));
          }}
        />
      ) : k.kind === 'words' ? (
        <input
          {...common}
          value={Array.isArray(value) ? value.join(', ') : ''}
          onInput={(e) =>
            onChange(
              path,
              (e.currentTarget as HTMLInputElement).value
                .split(',')
                .map((word) => word.trim())
                .filter(Boolean),
            )
          }
        />
      ) : k.long ? (
        <textarea
          {...common}
          rows={path[path.length - 1] === 'instructions' ? 6 : 2}
          value={typeof value === 'string' ? value : ''}
          onInput={(e) => onChange(path, (e.currentTarget as HTMLTextAreaElement).value)}
        />
      ) : (
        <input
          {...common}
          value={typeof value === 'string' ? value : ''}
          onInput={(e) => {
            const raw = (e.currentTarget as HTMLInputElement).value;
            onChange(path, raw === '' && field.nullable ? null : raw);
          }}
        />
      )}
      {hintNode}
    </div>
  );
}

const objectAt = (value: Json | undefined): Record<string, Json> =>
  value && typeof value === 'object' && !Array.isArray(value) ? value : {};

/** The form of `schema` over `value`; `onChange` gets the path of the edited setting and its new value. */
export function SchemaForm({
  schema,
  value,
  onChange,
  idPrefix = 'cfg',
  legend = 'General',
}: {
  idPrefix?: string;
  legend?: string;
  schema: Schema;
  value: Json;
  onChange: (path: string[], value: Json | undefined) => void;
}) {
  const top = objectAt(value);
  const simple: Array<[string, Schema, Field]> = [];
  const groups: Array<[string, Array<[string, Schema, Field]>]> = [];
  let elsewhere = 0;
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const field = fieldOf(prop);
    if (field) simple.push([key, prop, field]);
    else if (prop.properties) {
      const inner: Array<[string, Schema, Field]> = [];
      for (const [k, p] of Object.entries(prop.properties)) {
        const f = fieldOf(p);
        if (f) inner.push([k, p, f]);
        else elsewhere++;
      }
      if (inner.length) groups.push([key, inner]);
    } else elsewhere++;
  }
  return (
    <div class="schema-form stack">
      <fieldset>
        <legend>{legend}</legend>
        <div class="form-grid">
          {simple.map(([key, prop, field]) => (
            <SchemaField
              key={key}
              idPrefix={idPrefix}
              path={[key]}
              schema={prop}
              field={field}
              value={top[key]}
              onChange={onChange}
            />
          ))}
        </div>
      </fieldset>
      {groups.map(([group, fields]) => (
        <fieldset key={group}>
          <legend>{fieldWord(group)}</legend>
          {schema.properties?.[group]?.description && <p class="hint">{schema.properties[group]!.description}</p>}
          <div class="form-grid">
            {fields.map(([key, prop, field]) => (
              <SchemaField
                key={key}
                idPrefix={idPrefix}
                path={[group, key]}
                schema={prop}
                field={field}
                value={objectAt(top[group])[key]}
                onChange={onChange}
              />
            ))}
          </div>
        </fieldset>
      ))}
      {elsewhere > 0 && (
        <p class="muted">{elsewhere} more settings (lists and nested groups) are edited in the JSON view.</p>
      )}
    </div>
  );
}
