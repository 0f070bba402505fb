/**
 * The agent's long-term memory (docs/memory.md): its memories newest first (kind, pinned, made and last
 * used as relative time, text), a search that says whether it ran on words only or on words and meaning,
 * add, pin and unpin, forget, and the forgotten ones (kept 30 days). Reloaded on the agent's
 * `memory.saved` and `memory.forgotten` events, so the agent's own saves show up as they happen.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type MemoryItem, type MemoryList } from './api.js';
import { errorText, useEvents } from './util.js';
import { relative, Term } from './words.js';

const KINDS: Record<MemoryItem['kind'], string> = {
  fact: 'Fact',
  episode: 'Episode',
  summary: 'Summary',
  instruction: 'Instruction',
};
const SOURCES: Record<MemoryItem['source'], string> = {
  agent: 'saved by the agent',
  owner: 'added by you',
  compaction: 'from compaction',
  consolidation: 'merged by consolidation',
};

const ago = (iso: string | null) =>
  iso ? (
    <span title={new Date(iso).toLocaleString()}>{relative(Date.parse(iso))}</span>
  ) : (
    <span class="muted">never</span>
  );

/** How the search ran, from the route's answer: words and meaning, or words only (and why). */
function searchWords(answer: MemoryList): string {
  const found = `${answer.memories.length} found`;
  if (answer.mode === 'hybrid') return `${found} · searched by words and meaning (hybrid)`;
  return `${found} · searched by words only (full-text)${answer.note ? `: ${answer.note}` : ''}`;
}

export function Memory({ id }: { id: string }) {
  const [answer, setAnswer] = useState<MemoryList | null>(null);
  const [query, setQuery] = useState('');
  // Each search runs, the same words again included (new memories, or their vectors, may have come).
  const [searches, setSearches] = useState(0);
  const [forgotten, setForgotten] = useState(false);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const load = () =>
    client.memories(id, { q: query || undefined, forgotten: !query && forgotten }).then(
      (a) => (setAnswer(a), setError('')),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void load(), [id, query, forgotten, searches]);
  useEvents(
    (event) => {
      if (event.agent_id === id && (event.event_type === 'memory.saved' || event.event_type === 'memory.forgotten'))
        void load();
    },
    [id, query, forgotten],
  );

  const search = (event: Event) => {
    event.preventDefault();
    setQuery(
      ((event.currentTarget as HTMLFormElement).elements.namedItem('memory-query') as HTMLInputElement).value.trim(),
    );
    setSearches((n) => n + 1);
  };
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement;
    const text = field('memory-text').value.trim();
    if (!text) return;
    client
      .addMemory(id, {
        text,
        kind: field('memory-kind').value as MemoryItem['kind'],
        pinned: field('memory-pinned').checked,
      })
      .then(
        (r) => (form.reset(), setMessage(`Added memory ${r.memory.id}.`), load()),
        (e) => setMessage(errorText(e)),
      );
  };
  const pin = (m: MemoryItem) =>
    client.pinMemory(id, m.id, !m.pinned).then(
      () => (setMessage(`${m.pinned ? 'Unpinned' : 'Pinned'} memory ${m.id}.`), load()),
      (e) => setMessage(errorText(e)),
    );
  const forget = (m: MemoryItem) =>
    client.forgetMemory(id, m.id).then(
      () => (setMessage(`Forgot memory ${m.id}.`), load()),
      (e) => setMessage(errorText(e)),
    );

  const status = answer?.status;
  const embeddings = !status
    ? ''
    : status.embeddings.configured
      ? `searched by words and meaning${status.embeddings.pending ? ` (${status.embeddings.pending} waiting for their embedding)` : ''}`
      : 'searched by words only: no embedding model is set (settings memory.embeddings)';
  return (
    <div class="stack memory">
      {status && (
        <p class="muted">
          {status.live} {status.live === 1 ? 'memory' : 'memories'}, {status.pinned} pinned, {status.forgotten}{' '}
          forgotten; {embeddings}.
        </p>
      )}
      <form class="row" role="search" onSubmit={search}>
        <label for="memory-query">Search memories</label>
        <input id="memory-query" name="memory-query" type="search" />
        <button type="submit">Search</button>
        {query && (
          <button type="button" onClick={(e) => (e.currentTarget.form?.reset(), setQuery(''))}>
            Clear search
          </button>
        )}
        {!query && (
          <span class="row" role="group" aria-label="Which memories">
            <button type="button" class="small" aria-pressed={!forgotten} onClick={() => setForgotten(false)}>
              Kept
            </button>
            <button type="button" class="small" aria-pressed={forgotten} onClick={() => setForgotten(true)}>
              Forgotten
            </button>
          </span>
        )}
      </form>
      {query && answer?.mode && (
        <p role="status" class="search-mode">
          {searchWords(answer)}
        </p>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table class="memories fixed stacked">
          <caption class="sr-only">
            {query
              ? `Memories matching ${query}, best first`
              : forgotten
                ? 'Forgotten memories (kept 30 days)'
                : 'Memories, newest first'}
          </caption>
          <colgroup>
            <col class="c-kind" />
            <col class="c-time" />
            <col class="c-time" />
            <col />
            <col class="c-actions" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Made</th>
              <th scope="col">{forgotten && !query ? 'Forgotten' : 'Last used'}</th>
              <th scope="col">Text</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(answer?.memories ?? []).map((m) => (
              <tr key={m.id} data-memory-id={m.id}>
                <td>
                  <Term word={KINDS[m.kind] ?? m.kind} raw={m.kind} />
                  {m.pinned && <span class="badge tone-info">pinned</span>}
                </td>
                <td>
                  <span class="narrow-label">made </span>
                  {ago(m.created_at)}
                </td>
                <td>
                  <span class="narrow-label">{forgotten && !query ? 'forgotten ' : 'used '}</span>
                  {forgotten && !query ? ago(m.forgotten_at) : ago(m.used_at)}
                </td>
                <td>
                  <span class="memory-text">{m.text}</span>{' '}
                  <span class="muted">
                    · #{m.id}, {SOURCES[m.source] ?? m.source}
                  </span>
                </td>
                <td>
                  {!m.forgotten_at && (
                    <>
                      <button
                        type="button"
                        class="small"
                        aria-pressed={m.pinned}
                        aria-label={`${m.pinned ? 'Unpin' : 'Pin'} memory ${m.id}`}
                        onClick={() => pin(m)}
                      >
                        {m.pinned ? 'Unpin' : 'Pin'}
                      </button>{' '}
                      <button
                        type="button"
                        class="small danger"
                        aria-label={`Forget memory ${m.id}`}
                        onClick={() => forget(m)}
                      >
                        Forget
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!query && answer?.memories.length === 200 && (
          <p class="muted row">The newest 200: search to find older ones.</p>
        )}
        {answer && answer.memories.length === 0 && (
          <p class="muted row">
            {query ? 'No memory matches.' : forgotten ? 'Nothing forgotten in the last 30 days.' : 'No memory yet.'}
          </p>
        )}
      </div>
      <form onSubmit={add} aria-labelledby="add-memory-title">
        <h3 id="add-memory-title">Add a memory</h3>
        <div class="form-grid">
          <div class="wide">
            <label for="memory-text">Text</label>
            <textarea id="memory-text" name="memory-text" rows={2} required maxLength={8000} />
          </div>
          <div>
            <label for="memory-kind">Kind</label>
            <select id="memory-kind" name="memory-kind">
              {Object.entries(KINDS).map(([value, word]) => (
                <option value={value}>{word}</option>
              ))}
            </select>
          </div>
          <div class="check">
            <label>
              <input type="checkbox" name="memory-pinned" /> Pinned: recalled in every turn
            </label>
          </div>
        </div>
        <div class="row">
          <span class="muted spacer">Never a credential: a text holding one is refused.</span>
          <button type="submit" class="primary">
            Add memory
          </button>
        </div>
      </form>
      {message && <p role="status">{message}</p>}
    </div>
  );
}
