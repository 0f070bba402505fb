/**
 * An extension's options as a form generated from its options schema (`GET /runtime/extensions/{name}/config`):
 * a text, number, yes/no or choice field per top-level option of a simple type, its description as the
 * hint; the other options stay as the JSON they are. Saving sends only what changed
 * (`PATCH …/config`, a JSON Merge Patch) and says whether it applied at once or at the next start.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, client } from './api.js';
import { errorText } from './util.js';
import { fieldWord } from './words.js';

type Prop = {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
};
const simple = (p: Prop) =>
  Array.isArray(p.enum) || ['string', 'number', 'integer', 'boolean'].includes(String(p.type));

export function ExtensionOptions({ name }: { name: string }) {
  const [view, setView] = useState<Awaited<ReturnType<typeof client.extensionConfig>> | null>(null);
  const [draft, setDraft] = useState<Record<string, unknown>>({});
  const [message, setMessage] = useState('');
  const load = () =>
    client.extensionConfig(name).then(
      (v) => (setView(v), setDraft({})),
      (e) => setMessage(errorText(e)),
    );
  useEffect(() => void load(), [name]);
  if (!view) return message ? <p class="muted">{message}</p> : <p class="muted">…</p>;
  const props = Object.entries((view.schema as { properties?: Record<string, Prop> } | null)?.properties ?? {}).filter(
    ([, p]) => simple(p),
  );
  if (props.length === 0) return <p class="muted">No options to set here.</p>;
  const current = (key: string) =>
    key in draft ? draft[key] : (view.config[key] ?? (view.effective as Record<string, unknown> | null)?.[key] ?? '');
  const save = (event: Event) => {
    event.preventDefault();
    client.patchExtensionConfig(name, draft).then(
      (r) => (
        setMessage(
          r.applied
            ? 'Saved and applied.'
            : r.restartRequired
              ? 'Saved: applies at the next start of the daemon.'
              : 'Saved.',
        ),
        load()
      ),
      (e) => setMessage(e instanceof ApiError ? `Refused (${e.code}): ${e.message}` : errorText(e)),
    );
  };
  return (
    <form onSubmit={save} aria-label={`Options of ${name}`}>
      <div class="form-grid">
        {props.map(([key, p]) => {
          const id = `opt-${name}-${key}`;
          const value = current(key);
          const set = (next: unknown) => setDraft((d) => ({ ...d, [key]: next }));
          return (
            <div key={key}>
              {p.type === 'boolean' ? (
                <label>
                  <input type="checkbox" checked={value === true} onChange={() => set(value !== true)} />{' '}
                  {fieldWord(key)}
                </label>
              ) : (
                <>
                  <label for={id} title={key}>
                    {fieldWord(key)}
                  </label>
                  {Array.isArray(p.enum) ? (
                    <select
                      id={id}
                      value={String(value)}
                      onChange={(e) => set((e.currentTarget as HTMLSelectElement).value)}
                    >
                      {p.enum.map((o) => (
                        <option key={String(o)} value={String(o)}>
                          {String(o)}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <input
                      id={id}
                      type={p.type === 'number' || p.type === 'integer' ? 'number' : 'text'}
                      min={p.minimum}
                      max={p.maximum}
                      value={String(value ?? '')}
                      onInput={(e) => {
                        const raw = (e.currentTarget as HTMLInputElement).value;
                        set(p.type === 'number' || p.type === 'integer' ? Number(raw) : raw);
                      }}
                    />
                  )}
                </>
              )}
              {p.description && <span class="muted hint">{p.description}</span>}
            </div>
          );
        })}
      </div>
      <div class="row">
        <span class="spacer" />
        <button type="submit" class="primary small" disabled={Object.keys(draft).length === 0}>
          Save options
        </button>
      </div>
      {message && <p role="status">{message}</p>}
    </form>
  );
}
