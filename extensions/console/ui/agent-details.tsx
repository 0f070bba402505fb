/**
 * The agent's other panels, one shown at a time: the conversation paged back to its start, usage and
 * cost over time (uPlot, from the conversation's rows), loops, timers, logs, files (list, view, upload,
 * download), credential names (never values) and the config editor (the daemon validates it against
 * the agent-config schema and the refusal is shown field by field).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ApiError, client, type FileInfo, type LoopRow } from './api.js';
import { Readable } from './readable.js';
import { errorText, time, useEvents } from './util.js';

const TABS = ['History', 'Usage', 'Loops', 'Timers', 'Logs', 'Files', 'Credentials', 'Config'] as const;
type Tab = (typeof TABS)[number];

export const contentText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('');
  if (content && typeof content === 'object' && typeof (content as any).text === 'string') return (content as any).text;
  return JSON.stringify(content);
};

function History({ id }: { id: string }) {
  const [rows, setRows] = useState<LoopRow[]>([]);
  const [offset, setOffset] = useState<number | null>(null);
  const [error, setError] = useState('');
  // Pages merge by row id: an earlier page goes before, the last page (reloaded as rows are appended) after.
  const page = (at?: number) =>
    client.loopPage(id, at).then((p) => {
      setRows((old) => {
        const byId = new Map([...old, ...p.rows].map((row) => [row.id, row]));
        return [...byId.values()].sort((a, b) => a.id - b.id);
      });
      setOffset((old) => (at === undefined && old !== null ? Math.min(old, p.offset) : p.offset));
    }, (e) => setError(errorText(e)));
  useEffect(() => {
    setRows([]);
    setOffset(null);
    void page();
  }, [id]);
  useEvents((event) => {
    if (event.agent_id === id && event.event_type === 'loop.appended') void page();
  }, [id]);
  return (
    <>
      {error && <p role="alert" class="error">{error}</p>}
      {offset !== null && offset > 0 ? <button type="button" onClick={() => page(Math.max(0, offset - 50))}>Load earlier ({offset} more)</button> : <p class="muted">The start of the conversation.</p>}
      <ol class="chat">
        {rows.map((row) => (
          <li key={row.id} class={`msg msg-${row.role === 'user' ? 'user' : 'assistant'}`}>
            <span class="muted">{row.role} · {row.kind} · {time(row.created_at)}</span>
            {'\n'}{contentText(row.content)}
          </li>
        ))}
      </ol>
    </>
  );
}

function Usage({ id }: { id: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [summary, setSummary] = useState('');
  useEffect(() => {
    let plot: uPlot | undefined;
    Promise.all([client.rollup(id), client.loopPage(id, 0)]).then(([rollup, page]) => {
      setSummary(`${rollup.totals.total} tokens in all (${rollup.totals.input} in, ${rollup.totals.output} out)${typeof rollup.cost_usd === 'number' ? `, $${rollup.cost_usd.toFixed(4)}` : ''}`);
      const priced = page.rows.filter((row) => row.usage_input !== null || row.cost !== null);
      let cost = 0;
      const xs = priced.map((row) => row.created_at / 1000);
      const tokens = priced.map((row) => (row.usage_input ?? 0) + (row.usage_output ?? 0));
      const costs = priced.map((row) => (cost += row.cost ?? 0));
      if (box.current) plot = new uPlot({ width: 480, height: 200, series: [{}, { label: 'tokens', stroke: '#2f6fdf' }, { label: 'cost USD (cumulative)', stroke: '#c2410c', scale: 'usd' }], axes: [{}, {}, { scale: 'usd', side: 1 }] }, [xs, tokens, costs], box.current);
    }, (e) => setSummary(errorText(e)));
    return () => plot?.destroy();
  }, [id]);
  return <figure><div ref={box} role="img" aria-label={`Usage and cost over time: ${summary}`} /><figcaption>{summary}</figcaption></figure>;
}

/** Loops, timers, logs, credential names: the answer as readable lists and tables (credentials carry names and metadata, never a value). */
function Listing({ load }: { load: () => Promise<unknown> }) {
  const [state, setState] = useState<{ value?: unknown; error?: string }>({});
  useEffect(() => void load().then((value) => setState({ value }), (e) => setState({ error: errorText(e) })), [load]);
  if (state.error) return <p role="alert" class="error">{state.error}</p>;
  if (!('value' in state)) return <p class="muted">…</p>;
  // `{agentId, loops: [...]}` and the like: show the list itself, not the wrapper.
  const value = state.value;
  const lists = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value).filter(([, item]) => Array.isArray(item)) : [];
  return <div class="listing">{lists.length === 1 ? <Readable value={lists[0]![1]} /> : <Readable value={value} />}</div>;
}

function Files({ id }: { id: string }) {
  const [files, setFiles] = useState<FileInfo[]>([]);
  const [shown, setShown] = useState<{ path: string; text: string } | null>(null);
  const [error, setError] = useState('');
  const list = () => client.files(id).then((r) => setFiles(r.files), (e) => setError(errorText(e)));
  useEffect(() => void list(), [id]);
  const view = (path: string) => client.file(id, path, 'utf-8').then((f) => setShown({ path, text: f.encoding === 'base64' ? '(binary file: download it)' : f.content }), (e) => setError(errorText(e)));
  const download = async (path: string) => {
    const file = await client.file(id, path, 'base64');
    const bytes = Uint8Array.from(atob(file.content), (c) => c.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: file.mime_type ?? 'application/octet-stream' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = path.split('/').pop() ?? 'file';
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const upload = async (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('upload') as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    const bytes = new Uint8Array(await file.arrayBuffer());
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    await client.putFile(id, file.name, btoa(binary)).then(list, (e) => setError(errorText(e)));
    input.value = '';
  };
  return (
    <>
      {error && <p role="alert" class="error">{error}</p>}
      <table>
        <caption class="sr-only">Files</caption>
        <thead><tr><th scope="col">Path</th><th scope="col">Size</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {files.map((f) => (
            <tr key={f.path}>
              <td>{f.path}</td><td>{f.size}</td><td>{time(f.updated_at)}</td>
              <td><button type="button" onClick={() => view(f.path)} aria-label={`View ${f.path}`}>View</button> <button type="button" onClick={() => download(f.path)} aria-label={`Download ${f.path}`}>Download</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="row" onSubmit={upload}>
        <label for="upload">Upload a file</label>
        <input id="upload" name="upload" type="file" />
        <button type="submit">Upload</button>
      </form>
      {shown && <><h3>{shown.path}</h3><pre tabIndex={0}>{shown.text}</pre></>}
    </>
  );
}

function Config({ id }: { id: string }) {
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  useEffect(() => void client.config(id).then((r) => setText(JSON.stringify(r.config, null, 2)), (e) => setStatus(errorText(e))), [id]);
  const save = async (event: Event) => {
    event.preventDefault();
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch (error) {
      setStatus(`Not JSON: ${errorText(error)}`);
      return;
    }
    await client.putConfig(id, config).then(() => setStatus('Saved.'), (e) => setStatus(e instanceof ApiError ? `Refused (${e.code}): ${e.message}` : errorText(e)));
  };
  return (
    <form onSubmit={save} class="chat-form">
      <label for="config">Agent config (JSON; the daemon checks it against the agent-config schema)</label>
      <textarea id="config" rows={18} spellcheck={false} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
      <button type="submit">Save config</button>
      {status && <p role="status">{status}</p>}
    </form>
  );
}

export function AgentDetails({ id }: { id: string }) {
  const [tab, setTab] = useState<Tab>('History');
  const loaders = useRef<Record<string, () => Promise<unknown>>>({});
  loaders.current = { Loops: () => client.loops(id), Timers: () => client.timers(id), Logs: () => client.logs(id), Credentials: () => client.credentials(id) };
  return (
    <section aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <div class="row" role="group" aria-label="Panels">
        {TABS.map((name) => <button type="button" aria-pressed={tab === name} onClick={() => setTab(name)}>{name}</button>)}
      </div>
      {tab === 'History' ? <History id={id} /> : tab === 'Usage' ? <Usage id={id} /> : tab === 'Files' ? <Files id={id} /> : tab === 'Config' ? <Config id={id} /> : <Listing key={tab} load={loaders.current[tab]!} />}
    </section>
  );
}
