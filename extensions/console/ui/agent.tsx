/**
 * One agent: chat with the reply streamed in from `llm.delta` events, tool calls shown compactly (their
 * arguments on demand), its pending approvals/asks/suspends answered inline, interrupt, and the
 * details panels (agent-details.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { client } from './api.js';
import { AgentDetails } from './agent-details.js';
import { PendingList } from './inbox.js';
import { errorText, useEvents, useLive } from './util.js';

interface Line {
  key: string;
  role: 'user' | 'assistant' | 'tool' | 'error';
  text: string;
  detail?: string;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('') : '';

export function AgentView({ id }: { id: string }) {
  const { data: agents } = useLive(() => client.agents(), (type, agent) => agent === id && /^agent\./.test(type), [id]);
  const agent = agents?.find((a) => a.id === id);
  const [lines, setLines] = useState<Line[]>([]);
  const [streaming, setStreaming] = useState('');
  const [error, setError] = useState('');

  useEffect(() => {
    setLines([]);
    client.history(id).then((history) => {
      const rows = (history.llmMessages ?? []).map((m, index): Line => ({ key: `h${index}`, role: m.role === 'user' ? 'user' : m.role === 'tool' ? 'tool' : 'assistant', text: textOf(m.content) }));
      setLines(rows.filter((row) => row.text !== ''));
    }, (e) => setError(errorText(e)));
  }, [id]);

  useEvents((event) => {
    if (event.agent_id !== id) return;
    const payload = event.payload as any;
    switch (event.event_type) {
      case 'llm.delta':
        setStreaming((text) => text + String(payload.text ?? ''));
        break;
      case 'tool.started':
        setLines((all) => [...all, { key: `t${event.seq}`, role: 'tool', text: `${payload.tool}`, detail: JSON.stringify(payload.args, null, 2) }]);
        break;
      case 'turn.completed':
        setStreaming('');
        if (payload.text) setLines((all) => [...all, { key: `a${event.seq}`, role: 'assistant', text: String(payload.text) }]);
        break;
      case 'agent.error':
        setStreaming('');
        setLines((all) => [...all, { key: `e${event.seq}`, role: 'error', text: String(payload.message ?? payload.code ?? 'error') }]);
        break;
    }
  }, [id]);

  const send = (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('message') as HTMLTextAreaElement;
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    setLines((all) => [...all, { key: `u${Date.now()}`, role: 'user', text }]);
    client.chat(id, text).then(() => setError(''), (e) => setError(errorText(e)));
  };

  return (
    <section aria-labelledby="agent-title">
      <h1 id="agent-title">{agent?.name ?? id}</h1>
      <p>State: <span class="state">{agent?.runtimeState ?? '…'}</span> <button type="button" onClick={() => client.interrupt(id).catch((e) => setError(errorText(e)))}>Interrupt</button></p>
      {error && <p role="alert" class="error">{error}</p>}
      <h2>Waiting for you</h2>
      <PendingList agentId={id} />
      <h2>Chat</h2>
      <ol class="chat live" aria-live="polite">
        {lines.map((line) => (
          <li key={line.key} class={`msg msg-${line.role}`}>
            {line.role === 'tool' ? <details><summary>Tool call: <code>{line.text}</code></summary><pre tabIndex={0}>{line.detail ?? ''}</pre></details> : line.text}
          </li>
        ))}
        {streaming && <li class="msg msg-assistant streaming">{streaming}</li>}
      </ol>
      <form class="chat-form" onSubmit={send}>
        <label for="message">Message</label>
        <textarea id="message" name="message" rows={2} required />
        <button type="submit">Send</button>
      </form>
      <AgentDetails id={id} />
    </section>
  );
}
