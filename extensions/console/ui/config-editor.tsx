/**
 * The agent config editor: a form generated from the agent-config schema the daemon publishes
 * (schema-form.tsx) or the whole JSON, then a line diff of what changes before it is saved. The daemon
 * checks the result against that schema; a refusal is shown with its code.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, client } from './api.js';
import { errorText } from './util.js';
import { agentConfigSchema, type Json, type Schema, SchemaForm } from './schema-form.js';

function setAt(config: Json, path: string[], value: Json | undefined): Json | undefined {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const object = config && typeof config === 'object' && !Array.isArray(config) ? config : {};
  const next = setAt(object[head!] ?? null, rest, value);
  const { [head!]: _old, ...others } = object;
  return next === undefined ? others : { ...others, [head!]: next };
}

/** Lines removed (-) and added (+) between two texts, by their longest common subsequence. */
export function lineDiff(before: string, after: string): Array<['-' | '+' | ' ', string]> {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: Array<['-' | '+' | ' ', string]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push([' ', a[i]!]), i++, j++;
    else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push(['+', b[j++]!]);
    else out.push(['-', a[i++]!]);
  }
  return out;
}

export function ConfigEditor({ id }: { id: string }) {
  const [saved, setSaved] = useState('');
  const [text, setText] = useState('');
  const [mode, setMode] = useState<'form' | 'json' | 'review'>('form');
  const [status, setStatus] = useState('');
  const [schema, setSchema] = useState<Schema | null>(null);
  const [schemaError, setSchemaError] = useState('');
  useEffect(
    () =>
      void agentConfigSchema().then(
        (value) => setSchema(value),
        (e) => setSchemaError(errorText(e)),
      ),
    [],
  );
  const load = () =>
    client.config(id).then(
      (r) => {
        const json = JSON.stringify(r.config, null, 2);
        setSaved(json);
        setText(json);
      },
      (e) => setStatus(errorText(e)),
    );
  useEffect(() => void load(), [id]);
  let parsed: Json | undefined;
  let parseError = '';
  try {
    parsed = JSON.parse(text || 'null');
  } catch (error) {
    parseError = errorText(error);
  }
  const edit = (path: string[], value: Json | undefined) =>
    setText(JSON.stringify(setAt(parsed ?? {}, path, value) ?? {}, null, 2));
  const save = () =>
    client.putConfig(id, parsed).then(
      () => (setStatus('Saved.'), setMode('form'), load()),
      (e) => setStatus(e instanceof ApiError ? `Refused (${e.code}): ${e.message}` : errorText(e)),
    );
  const diff = mode === 'review' ? lineDiff(saved, JSON.stringify(parsed, null, 2)) : [];
  const changed = diff.filter(([mark]) => mark !== ' ').length;
  return (
    <div class="stack config-editor">
      <div class="tabs" role="group" aria-label="Config view">
        <button type="button" aria-pressed={mode === 'form'} onClick={() => setMode('form')} disabled={!!parseError}>
          Form
        </button>
        <button type="button" aria-pressed={mode === 'json'} onClick={() => setMode('json')}>
          JSON
        </button>
        <button
          type="button"
          aria-pressed={mode === 'review'}
          onClick={() => setMode('review')}
          disabled={!!parseError}
        >
          Review changes
        </button>
      </div>
      {mode === 'form' &&
        parsed !== undefined &&
        (schema ? (
          <SchemaForm schema={schema} value={parsed} onChange={edit} />
        ) : (
          <p class="muted">
            {schemaError ? `No form without the config schema (${schemaError}): use the JSON view.` : '…'}
          </p>
        ))}
      {mode === 'json' && (
        <>
          <label for="config">Agent config (JSON; the daemon checks it against the agent-config schema)</label>
          <textarea
            id="config"
            rows={18}
            spellcheck={false}
            value={text}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          />
          {parseError && <p class="error">Not JSON: {parseError}</p>}
        </>
      )}
      {mode === 'review' && (
        <>
          <p>{changed ? `${changed} changed lines:` : 'Nothing changed.'}</p>
          <pre class="diff" tabIndex={0} aria-label="Changes">
            {diff
              .filter(([mark], n) => mark !== ' ' || diff.slice(Math.max(0, n - 2), n + 3).some(([m]) => m !== ' '))
              .map(([mark, line]) => (
                <span class={mark === '+' ? 'add' : mark === '-' ? 'del' : undefined}>{`${mark} ${line}`}</span>
              ))}
          </pre>
          <div class="row">
            <button type="button" class="primary" disabled={!changed} onClick={save}>
              Save config
            </button>
          </div>
        </>
      )}
      {mode !== 'review' && (
        <div class="row">
          <button type="button" class="primary" disabled={!!parseError} onClick={() => setMode('review')}>
            Review changes
          </button>
        </div>
      )}
      {status && <p role="status">{status}</p>}
    </div>
  );
}
