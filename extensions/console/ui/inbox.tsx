/**
 * Inbox: every pending approval, budget task, ask and suspend across agents (`GET /tasks`, oldest
 * first), answered in place. An approval shows its arguments (never behind a click: the owner approves
 * what they see). An ask's `options`, when it has some, are offered as choices; one "Answer" button.
 * In the inbox view: keyboard shortcuts (j / k or arrows move, a approve, d deny, x select, r answer)
 * and batch approve / deny of the selected items.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, type PendingItem } from './api.js';
import { errorText, time, useLive } from './util.js';
import { kindWord, relative } from './words.js';

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
  const act = (what: () => Promise<unknown>) =>
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
      {item.tool && (
        <p>
          Wants to run <code>{item.tool}</code>
          {item.kind === 'budget' ? ' past its budget' : ''} with:
        </p>
      )}
      {item.args && (
        <pre class="args" tabIndex={0} aria-label={`Arguments of ${item.tool ?? 'the call'}`}>
          {JSON.stringify(item.args, null, 2)}
        </pre>
      )}
      {item.question && (
        <p>
          <strong>{item.question}</strong>
        </p>
      )}
      {item.reason && <p>{item.reason}</p>}
      {answerable(item) && (
        <div class="actions">
          <button type="button" class="primary" onClick={() => act(() => client.resolve(item, 'approve'))}>
            Approve
          </button>
          <button type="button" class="danger" onClick={() => act(() => client.resolve(item, 'deny'))}>
            Deny
          </button>
        </div>
      )}
      {item.kind === 'ask' && (
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
