/** Inbox: every pending approval, ask and suspend across agents (`GET /tasks`), answered in place. */
import { useState } from 'preact/hooks';
import { client, type PendingItem } from './api.js';
import { errorText, time, useLive } from './util.js';

const RELOAD = /^(hil\.|task\.|turn\.|agent\.(unloaded|loaded|error))/;

function Item({ item }: { item: PendingItem }) {
  const [error, setError] = useState('');
  const [answer, setAnswer] = useState('');
  const act = (what: () => Promise<unknown>) => void what().then(() => setError(''), (e) => setError(errorText(e)));
  const label = `${item.kind} from ${item.agentName}`;
  return (
    <li class="task" aria-label={label}>
      <p><strong>{item.kind}</strong> · <a href={`#/agent/${encodeURIComponent(item.agentId)}`}>{item.agentName}</a> · {time(item.createdAt)}</p>
      {item.tool && <p>Tool <code>{item.tool}</code></p>}
      {item.args && <details><summary>Arguments</summary><pre tabIndex={0}>{JSON.stringify(item.args, null, 2)}</pre></details>}
      {item.question && <p>{item.question}</p>}
      {item.reason && <p>{item.reason}</p>}
      {(item.kind === 'approval' || item.kind === 'budget') && (
        <div class="row">
          <button type="button" onClick={() => act(() => client.resolve(item, 'approve'))}>Approve</button>
          <button type="button" onClick={() => act(() => client.resolve(item, 'deny'))}>Deny</button>
        </div>
      )}
      {item.kind === 'ask' && (
        <form class="row" onSubmit={(event) => (event.preventDefault(), act(() => client.answer(item, answer)))}>
          <label for={`answer-${item.id}`}>Answer</label>
          <input id={`answer-${item.id}`} value={answer} onInput={(event) => setAnswer((event.currentTarget as HTMLInputElement).value)} required />
          <button type="submit">Send</button>
        </form>
      )}
      {item.kind === 'suspend' && (
        <div class="row">
          <button type="button" onClick={() => act(() => client.suspend(item, true))}>Resume</button>
          <button type="button" onClick={() => act(() => client.suspend(item, false))}>Keep suspended</button>
        </div>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </li>
  );
}

/** The pending items, of one agent when `agentId` is given (the agent view shows its own inline). */
export function PendingList({ agentId }: { agentId?: string }) {
  const { data, error } = useLive(() => client.tasks(), (type, agent) => RELOAD.test(type) && (!agentId || agent === agentId), [agentId]);
  const items = (data?.tasks ?? []).filter((item) => !agentId || item.agentId === agentId);
  return (
    <>
      {error && <p role="alert" class="error">{error}</p>}
      {items.length === 0 ? <p class="muted">Nothing waits for an answer.</p> : <ul class="tasks">{items.map((item) => <Item key={item.id} item={item} />)}</ul>}
    </>
  );
}

export function Inbox() {
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <PendingList />
    </section>
  );
}
