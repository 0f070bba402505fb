/**
 * One agent: the conversation as a chat (the owner on the right, the agent on the left, its Markdown
 * rendered as text nodes), each tool call a collapsible card (arguments, result, duration, status, the progress
 * a running call reports), the reply streamed in from `llm.delta` events, what waits for the owner (approvals with their arguments,
 * asks, suspends) inline above the message box, the memories each turn recalled (recall.tsx), interrupt, and
 * the details panels (agent-details.tsx).
 * Enter sends, Shift+Enter makes a new line.
 */
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, type ChatMessage } from './api.js';
import { AgentDetails } from './agent-details.js';
import { PendingList } from './inbox.js';
import { Markdown } from './markdown.js';
import { RecallNote, useRecalls } from './recall.js';
import { errorText, time, useEvents, useLive } from './util.js';
import { StateBadge } from './words.js';

type Entry =
  | {
      key: string;
      type: 'msg';
      role: 'user' | 'assistant' | 'error' | 'system';
      text: string;
      at?: number;
      turnId?: string | null;
    }
  | {
      key: string;
      type: 'tool';
      callId: string;
      name: string;
      args: unknown;
      result?: string;
      status: 'running' | 'done' | 'failed';
      ms?: number;
      /** The latest `tool.progress` of a running call (an MCP server's progress notifications). */
      progress?: { progress: number; total?: number; message?: string };
      /**
       * The MCP servers whose confirmation of a URL elicitation the call waits for, by elicitation id
       * (`mcp.elicitation.waiting` until `mcp.elicitation.completed`).
       */
      confirming?: Record<string, string>;
    };

/** The chat history (`GET /agents/{id}/chat`; null when the agent has no conversation yet) as entries. */
function entriesOf(messages: ChatMessage[]): Entry[] {
  const out: Entry[] = [];
  const cards = new Map<string, Extract<Entry, { type: 'tool' }>>();
  for (const m of messages) {
    if (m.role === 'tool') {
      const card = m.toolCallId ? cards.get(m.toolCallId) : undefined;
      if (card) Object.assign(card, { result: m.content, status: m.isError ? 'failed' : 'done' });
      continue;
    }
    if (m.content)
      out.push({
        key: `h${m.id}`,
        type: 'msg',
        role: m.role === 'user' ? 'user' : m.role === 'system' ? 'system' : 'assistant',
        text: m.content,
        at: m.createdAt,
        turnId: m.turnId,
      });
    for (const call of m.toolCalls ?? []) {
      const card = {
        key: `c${call.id}`,
        type: 'tool' as const,
        callId: call.id,
        name: call.name,
        args: call.args,
        status: 'running' as const,
      };
      cards.set(call.id, card);
      out.push(card);
    }
  }
  return out;
}

function ToolCard({ entry, held }: { entry: Extract<Entry, { type: 'tool' }>; held: boolean }) {
  // A call still out while the agent waits for approval is the one waiting.
  const waits = held && entry.status === 'running';
  // A URL elicitation the owner accepted: the call waits for the server to say it is done.
  const confirming = entry.status === 'running' ? Object.values(entry.confirming ?? {})[0] : undefined;
  const tone =
    entry.status === 'failed' ? 'error' : waits || confirming ? 'wait' : entry.status === 'running' ? 'busy' : 'ok';
  const word =
    entry.status === 'failed'
      ? 'failed'
      : waits
        ? 'needs approval'
        : confirming
          ? `waiting for ${confirming} to confirm`
          : entry.status === 'running'
            ? 'running'
            : 'done';
  return (
    <li class="tool-card" data-tool={entry.name}>
      <details>
        <summary>
          <span>
            Tool call <code>{entry.name}</code>
          </span>
          <span class={`badge tone-${tone}`}>{word}</span>
          {entry.ms !== undefined && (
            <span class="muted">{entry.ms < 1000 ? `${entry.ms} ms` : `${(entry.ms / 1000).toFixed(1)} s`}</span>
          )}
          {entry.status === 'running' && entry.progress && <ProgressLine {...entry.progress} />}
        </summary>
        <div class="body">
          <h3>Arguments</h3>
          <pre tabIndex={0}>{JSON.stringify(entry.args, null, 2)}</pre>
          <h3>Result</h3>
          {entry.result !== undefined ? (
            <pre tabIndex={0}>{entry.result}</pre>
          ) : (
            <p class="muted">{entry.status === 'running' ? 'Not back yet.' : 'In the history once the turn ends.'}</p>
          )}
        </div>
      </details>
    </li>
  );
}

/** A running call's latest progress: a bar when the end is known, else the count; then its message. */
function ProgressLine({ progress, total, message }: { progress: number; total?: number; message?: string }) {
  return (
    <span class="muted tool-progress" role="status">
      {total !== undefined && total > 0 ? (
        <progress value={Math.min(progress, total)} max={total} aria-label="progress" />
      ) : (
        <span>{progress}</span>
      )}{' '}
      {total !== undefined && `${progress}/${total}`} {message}
    </span>
  );
}

export function AgentView({ id }: { id: string }) {
  const { data: agents } = useLive(
    () => client.agents(),
    (type, agent) => agent === id && /^agent\./.test(type),
    [id],
  );
  const agent = agents?.find((a) => a.id === id);
  const [entries, setEntries] = useState<Entry[]>([]);
  const [streaming, setStreaming] = useState('');
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);
  const log = useRef<HTMLOListElement>(null);
  const recalls = useRecalls(id);

  useEffect(() => {
    let alive = true;
    client.history(id).then(
      (history) => {
        // A new agent has no conversation yet: the route answers null.
        if (alive) setEntries(entriesOf(history?.llmMessages ?? []));
      },
      (e) => alive && setError(errorText(e)),
    );
    return () => void (alive = false);
  }, [id, reloads]);
  useEffect(() => setEntries([]), [id]);
  // The newest message in view, once the browser has laid it out.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      const el = log.current?.parentElement;
      if (el) el.scrollTop = el.scrollHeight;
    });
    return () => cancelAnimationFrame(frame);
  }, [entries, streaming]);

  useEvents(
    (event) => {
      if (event.agent_id !== id) return;
      const payload = event.payload as any;
      switch (event.event_type) {
        case 'llm.delta':
          setStreaming((text) => text + String(payload.text ?? ''));
          break;
        case 'llm.completed':
          setStreaming('');
          break;
        case 'tool.started':
          setEntries((all) =>
            all.some((e) => e.type === 'tool' && e.callId === payload.call_id)
              ? all
              : [
                  ...all,
                  {
                    key: `c${payload.call_id}`,
                    type: 'tool',
                    callId: String(payload.call_id),
                    name: String(payload.tool),
                    args: payload.args,
                    status: 'running',
                  },
                ],
          );
          break;
        case 'tool.progress':
          setEntries((all) =>
            all.map((e) =>
              e.type === 'tool' && e.callId === payload.call_id
                ? {
                    ...e,
                    progress: {
                      progress: Number(payload.progress),
                      ...(payload.total !== undefined ? { total: Number(payload.total) } : {}),
                      ...(payload.message ? { message: String(payload.message) } : {}),
                    },
                  }
                : e,
            ),
          );
          break;
        case 'mcp.elicitation.waiting':
        case 'mcp.elicitation.completed': {
          const waiting = event.event_type === 'mcp.elicitation.waiting';
          const key = String(payload.elicitation_id);
          setEntries((all) =>
            all.map((e) => {
              if (e.type !== 'tool' || e.callId !== payload.call_id) return e;
              const { [key]: _, ...rest } = e.confirming ?? {};
              return { ...e, confirming: waiting ? { ...rest, [key]: String(payload.server) } : rest };
            }),
          );
          break;
        }
        case 'tool.completed':
          setEntries((all) =>
            all.map((e) =>
              e.type === 'tool' && e.callId === payload.call_id
                ? { ...e, status: payload.ok ? 'done' : 'failed', ms: payload.duration_ms }
                : e,
            ),
          );
          break;
        case 'turn.completed':
          setStreaming('');
          if (payload.text)
            setEntries((all) => [
              ...all,
              { key: `a${event.seq}`, type: 'msg', role: 'assistant', text: String(payload.text), at: event.timestamp },
            ]);
          // The durable history has the tool results: read it again.
          setReloads((n) => n + 1);
          break;
        case 'agent.error':
          setStreaming('');
          setEntries((all) => [
            ...all,
            {
              key: `e${event.seq}`,
              type: 'msg',
              role: 'error',
              text: String(payload.message ?? payload.code ?? 'error'),
            },
          ]);
          break;
      }
    },
    [id],
  );

  const send = (form: HTMLFormElement) => {
    const input = form.elements.namedItem('message') as HTMLTextAreaElement;
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    const key = `u${Date.now()}`;
    setEntries((all) => [...all, { key, type: 'msg', role: 'user', text, at: Date.now() }]);
    // The turn's id ties the message to what the turn recalls.
    client.chat(id, text).then(
      (r) => (setError(''), setEntries((all) => all.map((e) => (e.key === key ? { ...e, turnId: r.turnId } : e)))),
      (e) => setError(errorText(e)),
    );
  };
  const name = agent?.name ?? id;

  return (
    <section aria-labelledby="agent-title">
      <div class="agent-head">
        <h1 id="agent-title">{name}</h1>
        {agent && <StateBadge state={agent.runtimeState} />}
        <span class="spacer" />
        <button type="button" onClick={() => client.interrupt(id).catch((e) => setError(errorText(e)))}>
          Interrupt
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <h2 class="sr-only">Chat</h2>
      <div class="chat-log" tabIndex={0} aria-label={`Conversation with ${name}`}>
        <ol class="chat live" ref={log} aria-live="polite">
          {entries.length === 0 && !streaming && <li class="muted">No messages yet. Say something below.</li>}
          {entries.map((entry, i) =>
            entry.type === 'tool' ? (
              <ToolCard key={entry.key} entry={entry} held={agent?.runtimeState === 'awaiting_approval'} />
            ) : (
              <Fragment key={entry.key}>
                <li class={`msg msg-${entry.role}`}>
                  <span class="who">
                    {entry.role === 'user'
                      ? 'You'
                      : entry.role === 'error'
                        ? 'Error'
                        : entry.role === 'system'
                          ? 'Notice'
                          : name}
                    {entry.at ? ` · ${time(entry.at)}` : ''}
                  </span>
                  {entry.role === 'assistant' ? <Markdown text={entry.text} /> : entry.text}
                </li>
                {/* After the message that started the turn: what the turn recalled before its first model call. */}
                {entry.role === 'user' &&
                  entry.turnId &&
                  recalls.has(entry.turnId) &&
                  !entries.slice(0, i).some((e) => e.type === 'msg' && e.turnId === entry.turnId) && (
                    <RecallNote agentId={id} recall={recalls.get(entry.turnId)!} />
                  )}
              </Fragment>
            ),
          )}
          {streaming && (
            <li class="msg msg-assistant streaming">
              <span class="who">{name}</span>
              {streaming}
            </li>
          )}
        </ol>
      </div>
      <PendingList agentId={id} />
      <form
        class="composer"
        onSubmit={(event) => (event.preventDefault(), send(event.currentTarget as HTMLFormElement))}
      >
        <label for="message">Message</label>
        <textarea
          id="message"
          name="message"
          rows={2}
          required
          placeholder="Enter sends, Shift+Enter adds a line"
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
              event.preventDefault();
              send((event.currentTarget as HTMLTextAreaElement).form!);
            }
          }}
        />
        <button type="submit" class="primary">
          Send
        </button>
      </form>
      <AgentDetails id={id} />
    </section>
  );
}
