/**
 * Inbox: every pending approval, budget task, ask and suspend across agents (`GET /tasks`, oldest
 * first), answered in place. An approval shows its arguments (never behind a click: the owner approves
 * what they see), with "Always allow" (the tool no longer restricted for that agent). A budget task says which
 * budget and by how much, with allow this call, raise today's limit by an amount, or deny. An ask's `options`,
 * when it has some, are offered as choices; an ask with a flat JSON Schema (an MCP elicitation) is a form; one
 * "Answer" button.
 * In the inbox view: keyboard shortcuts (j / k or arrows move, a approve, d deny, x select, r answer)
 * and batch approve / deny of the selected items.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, type PendingItem } from './api.js';
import { errorText, time, useLive } from './util.js';
import { kindWord, relative } from './words.js';
import { fieldOf, type Json, type Schema, SchemaForm } from './schema-form.js';

const RELOAD = /^(hil\.|task\.|turn\.|agent\.(unloaded|loaded|error))/;
const answerable = (item: PendingItem) => item.kind === 'approval' || item.kind === 'budget';
/** Options an ask may carry (a list of strings, or of `{label, value}`). */
const optionsOf = (item: PendingItem): string[] => {
  const options = (item as { options?: unknown }).options;
  return Array.isArray(options)
    ? options
        .map((o) => (typeof o === 'string' ? o : String((o as any)?.label ?? (o as any)?.value ?? '')))
        .filter(Boolean)
    : [];
};

type Act = (what: () => Promise<unknown>) => void;

/**
 * A budget task (docs/costs.md): which budget, its limit, what is used and what the call needs, in words; allow
 * this call (today's limit raised by what it lacks), raise today's limit by an amount, or deny (the turn ends).
 */
function BudgetPrompt({ item, act }: { item: PendingItem; act: Act }) {
  const args = (item.args ?? {}) as {
    budget?: string;
    limit?: number;
    used?: number;
    needed?: number;
    shortfall?: number;
  };
  const [amount, setAmount] = useState(String(args.shortfall ?? ''));
  const id = `raise-${item.id}`;
  return (
    <>
      <p>
        Over its budget <code>{args.budget}</code>: limit {args.limit}, {args.used} used, this call needs {args.needed}{' '}
        ({args.shortfall} more than the limit allows).
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={() => act(() => client.resolve(item, 'approve'))}>
          Allow this call
        </button>
        <form class="row" onSubmit={(event) => (event.preventDefault(), act(() => client.raise(item, Number(amount))))}>
          <label for={id}>Raise today's limit by</label>
          <input
            id={id}
            type="number"
            min="0"
            step="any"
            class="narrow"
            value={amount}
            onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)}
            required
          />
          <button type="submit">Raise</button>
        </form>
        <button type="button" class="danger" onClick={() => act(() => client.resolve(item, 'deny'))}>
          Deny
        </button>
      </div>
    </>
  );
}

/** The JSON Schema an ask may carry for its answer (an MCP elicitation's requested schema), when it is a flat form. */
const schemaOf = (item: PendingItem): Schema | undefined => {
  const schema = (item as { schema?: Schema }).schema;
  return schema?.properties && Object.values(schema.properties).every((p) => fieldOf(p)) ? schema : undefined;
};

/** An ask with a schema: its fields as a form; the answer is the object of the values given, as JSON. */
function AskForm({ item, schema, act }: { item: PendingItem; schema: Schema; act: Act }) {
  const [values, setValues] = useState<Record<string, Json>>({});
  const submit = (event: Event) => {
    event.preventDefault();
    act(() => client.answer(item, JSON.stringify(values)));
  };
  return (
    <form class="stack" onSubmit={submit} aria-label={`Answer to ${item.agentName}`}>
      <SchemaForm
        schema={schema}
        value={values}
        idPrefix={`ask-${item.id}`}
        legend="Your answer"
        onChange={([key], value) =>
          setValues(({ [key!]: _old, ...rest }) => (value === undefined ? rest : { ...rest, [key!]: value }))
        }
      />
      <div class="row">
        <span class="spacer" />
        <button type="button" onClick={() => act(() => client.answer(item, 'decline'))}>
          Decline
        </button>
        <button type="submit" class="primary">
          Answer
        </button>
      </div>
    </form>
  );
}

function Item({
  item,
  current,
  selected,
  onSelect,
  onFocus,
}: {
  item: PendingItem;
  current?: boolean;
  selected?: boolean;
  onSelect?: () => void;
  onFocus?: () => void;
}) {
  const [error, setError] = useState('');
  const [answer, setAnswer] = useState('');
  const act: Act = (what: () => Promise<unknown>) =>
    void what().then(
      () => setError(''),
      (e) => setError(errorText(e)),
    );
  const label = `${item.kind} from ${item.agentName}`;
  const options = optionsOf(item);
  const tone = item.kind === 'budget' ? 'error' : item.kind === 'suspend' ? 'info' : 'wait';
  return (
    <li
      class="task"
      aria-label={label}
      data-task-id={item.id}
      tabIndex={onFocus ? (current ? 0 : -1) : undefined}
      aria-current={current ? 'true' : undefined}
      onFocusIn={onFocus}
    >
      <div class="head">
        {onSelect && answerable(item) && (
          <input type="checkbox" aria-label={`Select ${label}`} checked={selected} onChange={onSelect} />
        )}
        <span class={`badge tone-${tone}`}>{kindWord(item.kind)}</span>
        <a href={`#/agent/${encodeURIComponent(item.agentId)}`}>{item.agentName}</a>
        <span class="muted" title={time(item.createdAt)}>
          {relative(item.createdAt)}
        </span>
      </div>
      {item.kind === 'budget' ? (
        <BudgetPrompt item={item} act={act} />
      ) : (
        <>
          {item.tool && (
            <p>
              Wants to run <code>{item.tool}</code> with:
            </p>
          )}
          {item.args && (
            <pre class="args" tabIndex={0} aria-label={`Arguments of ${item.tool ?? 'the call'}`}>
              {JSON.stringify(item.args, null, 2)}
            </pre>
          )}
        </>
      )}
      {item.question && (
        <p>
          <strong>{item.question}</strong>
        </p>
      )}
      {item.reason && <p>{item.reason}</p>}
      {item.kind === 'approval' && (
        <div class="actions">
          <button type="button" class="primary" onClick={() => act(() => client.resolve(item, 'approve'))}>
            Approve
          </button>
          {item.tool && (
            <button
              type="button"
              title={`Approve, and stop asking: ${item.tool} is no longer restricted for ${item.agentName}`}
              onClick={() => act(() => client.alwaysAllow(item))}
            >
              Always allow {item.tool}
            </button>
          )}
          <button type="button" class="danger" onClick={() => act(() => client.resolve(item, 'deny'))}>
            Deny
          </button>
        </div>
      )}
      {item.kind === 'ask' && schemaOf(item) ? (
        <AskForm item={item} schema={schemaOf(item)!} act={act} />
      ) : (
        item.kind === 'ask' && (
          <form class="stack" onSubmit={(event) => (event.preventDefault(), act(() => client.answer(item, answer)))}>
            {options.length > 0 && (
              <fieldset class="choices">
                <legend class="sr-only">Choices</legend>
                {options.map((option) => (
                  <label key={option}>
                    <input
                      type="radio"
                      name={`choice-${item.id}`}
                      value={option}
                      checked={answer === option}
                      onChange={() => setAnswer(option)}
                    />
                    {option}
                  </label>
                ))}
              </fieldset>
            )}
            <label for={`answer-${item.id}`}>{options.length ? 'Or write an answer' : 'Answer'}</label>
            <div class="row">
              <input
                id={`answer-${item.id}`}
                class="spacer"
                value={answer}
                onInput={(event) => setAnswer((event.currentTarget as HTMLInputElement).value)}
                required
              />
              <button type="submit" class="primary">
                Answer
              </button>
            </div>
          </form>
        )
      )}
      {item.kind === 'suspend' && (
        <div class="actions">
          <button type="button" class="primary" onClick={() => act(() => client.suspend(item, true))}>
            Resume
          </button>
          <button type="button" onClick={() => act(() => client.suspend(item, false))}>
            Keep suspended
          </button>
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </li>
  );
}

/** The pending items of one agent (the agent view shows its own inline). */
export function PendingList({ agentId }: { agentId: string }) {
  const { data, error } = useLive(
    () => client.tasks(),
    (type, agent) => RELOAD.test(type) && agent === agentId,
    [agentId],
  );
  const items = (data?.tasks ?? []).filter((item) => item.agentId === agentId);
  if (!items.length && !error) return null;
  return (
    <>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul class="tasks">
        {items.map((item) => (
          <Item key={item.id} item={item} />
        ))}
      </ul>
    </>
  );
}

export function Inbox() {
  const { data, error } = useLive(
    () => client.tasks(),
    (type) => RELOAD.test(type),
  );
  const items = data?.tasks ?? [];
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [message, setMessage] = useState('');
  const list = useRef<HTMLUListElement>(null);
  const index = Math.max(
    0,
    items.findIndex((item) => item.id === currentId),
  );
  const current = items[index];
  useEffect(() => setSelected((old) => new Set([...old].filter((id) => items.some((item) => item.id === id)))), [data]);
  const focusAt = (at: number) => {
    const next = items[Math.min(items.length - 1, Math.max(0, at))];
    if (!next) return;
    setCurrentId(next.id);
    list.current?.querySelector<HTMLElement>(`[data-task-id="${CSS.escape(next.id)}"]`)?.focus();
  };
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const batch = (action: 'approve' | 'deny', chosen: PendingItem[]) => {
    Promise.allSettled(chosen.map((item) => client.resolve(item, action))).then((results) => {
      const failed = results.filter((r) => r.status === 'rejected').length;
      setMessage(
        `${action === 'approve' ? 'Approved' : 'Denied'} ${chosen.length - failed} of ${chosen.length}.${failed ? ` ${failed} refused.` : ''}`,
      );
      setSelected(new Set());
    });
  };
  const onKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement;
    if (event.altKey || event.ctrlKey || event.metaKey || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
    const key = event.key;
    if (key === 'j' || key === 'ArrowDown') focusAt(index + 1);
    else if (key === 'k' || key === 'ArrowUp') focusAt(index - 1);
    else if (current && key === 'x' && answerable(current)) toggle(current.id);
    else if (current && (key === 'a' || key === 'd') && answerable(current)) {
      const chosen = selected.size ? items.filter((item) => selected.has(item.id)) : [current];
      batch(key === 'a' ? 'approve' : 'deny', chosen);
      focusAt(index);
    } else if (current && key === 'r' && current.kind === 'ask')
      list.current?.querySelector<HTMLInputElement>(`#answer-${CSS.escape(current.id)}`)?.focus();
    else return;
    event.preventDefault();
  };
  const chosen = items.filter((item) => selected.has(item.id));
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <p class="muted hide-narrow" id="inbox-keys">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> approve, <kbd>d</kbd> deny, <kbd>x</kbd> select, <kbd>r</kbd>{' '}
        answer. With items selected, <kbd>a</kbd> and <kbd>d</kbd> answer all of them.
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="toolbar">
        <span class="muted" aria-live="polite">
          {items.length} waiting{chosen.length ? `, ${chosen.length} selected` : ''}
        </span>
        <span class="spacer" />
        <button type="button" class="primary" disabled={!chosen.length} onClick={() => batch('approve', chosen)}>
          Approve selected
        </button>
        <button type="button" class="danger" disabled={!chosen.length} onClick={() => batch('deny', chosen)}>
          Deny selected
        </button>
      </div>
      {message && <p role="status">{message}</p>}
      {items.length === 0 ? (
        <p class="muted card">Nothing waits for an answer.</p>
      ) : (
        <ul class="tasks" ref={list} onKeyDown={onKey} aria-describedby="inbox-keys">
          {items.map((item) => (
            <Item
              key={item.id}
              item={item}
              current={item === current}
              selected={selected.has(item.id)}
              onSelect={() => toggle(item.id)}
              onFocus={() => setCurrentId(item.id)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
