/**
 * The agent's other panels, one shown at a time: the conversation paged back to its start, usage and cost over time
 * (uPlot, from the conversation's rows), memory (memory.tsx), loops with their editor (loops.tsx), timers, logs by level, files (list, view, upload,
 * download), credential names (never values), its MCP servers with a per-agent sign-in (agent-mcp.tsx) and the config editor (the daemon validates it against the agent-config
 * schema and the refusal is shown field by field).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { axisLabels } from './chart.js';
import { client, type FileInfo, type LogEntry, type LoopRow, type UsageRollup } from './api.js';
import { Loops } from './loops.js';
import { Backup, Credentials, Timers } from './agent-panels.js';
import { ConfigEditor } from './config-editor.js';
import { Memory } from './memory.js';
import { Timeline } from './timeline.js';
import { AgentMcp } from './agent-mcp.js';
import { errorText, time, useEvents } from './util.js';

const TABS = [
  'Usage',
  'Timeline',
  'History',
  'Memory',
  'Loops',
  'Timers',
  'Logs',
  'Files',
  'Credentials',
  'MCP',
  'Config',
  'Backup',
] as const;
type Tab = (typeof TABS)[number];

export const contentText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('');
  if (content && typeof content === 'object' && typeof (content as any).text === 'string') return (content as any).text;
  return JSON.stringify(content);
};

const ROLE: Record<string, string> = { user: 'Owner', assistant: 'Agent', tool: 'Tool', system: 'Notice' };

function History({ id }: { id: string }) {
  const [rows, setRows] = useState<LoopRow[]>([]);
  const [offset, setOffset] = useState<number | null>(null);
  const [error, setError] = useState('');
  // Pages merge by row id: an earlier page goes before, the last page (reloaded as rows are appended) after.
  const page = (at?: number) =>
    client.loopPage(id, at).then(
      (p) => {
        setRows((old) => {
          const byId = new Map([...old, ...p.rows].map((row) => [row.id, row]));
          return [...byId.values()].sort((a, b) => a.id - b.id);
        });
        setOffset((old) => (at === undefined && old !== null ? Math.min(old, p.offset) : p.offset));
      },
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    setRows([]);
    setOffset(null);
    void page();
  }, [id]);
  useEvents(
    (event) => {
      if (event.agent_id === id && event.event_type === 'loop.appended') void page();
    },
    [id],
  );
  return (
    <>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {offset !== null && offset > 0 ? (
        <button type="button" onClick={() => page(Math.max(0, offset - 50))}>
          Load earlier ({offset} more)
        </button>
      ) : (
        <p class="muted">The start of the conversation.</p>
      )}
      <div class="table-wrap">
        <table class="history fixed stacked">
          <caption class="sr-only">Every row of the conversation, oldest first</caption>
          <colgroup>
            <col class="c-time" />
            <col class="c-level" />
            <col class="c-origin" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">From</th>
              <th scope="col">Kind</th>
              <th scope="col">Content</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id} class={`row-${row.role}`}>
                <td>{time(row.created_at)}</td>
                <td>{ROLE[row.role] ?? row.role}</td>
                <td>{row.kind.replace(/_/g, ' ')}</td>
                <td>{contentText(row.content)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Usage({ id }: { id: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [summary, setSummary] = useState('');
  const [byModel, setByModel] = useState<UsageRollup['byModel']>([]);
  useEffect(() => {
    let plot: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    Promise.all([client.rollup(id), client.loopPage(id, 0)]).then(
      ([rollup, page]) => {
        setByModel(rollup.byModel ?? []);
        setSummary(
          `${rollup.totals.total} tokens in all (${rollup.totals.input} in, ${rollup.totals.output} out)${typeof rollup.cost_usd === 'number' ? `, $${rollup.cost_usd.toFixed(4)}` : ''}`,
        );
        const priced = page.rows.filter((row) => row.usage_input !== null || row.cost !== null);
        let cost = 0;
        const xs = priced.map((row) => row.created_at / 1000);
        const tokens = priced.map((row) => (row.usage_input ?? 0) + (row.usage_output ?? 0));
        const costs = priced.map((row) => (cost += row.cost ?? 0));
        const el = box.current;
        if (!el) return;
        const width = () => Math.max(240, Math.min(760, el.clientWidth));
        // Unpriced models give no cost: then the chart is tokens only, with no cost axis to read wrong.
        const priced$ = costs.some((c) => c > 0);
        const axis = {
          stroke: '#8a93a3',
          grid: { stroke: 'rgba(138,147,163,.25)' },
          ticks: { stroke: 'rgba(138,147,163,.4)' },
        };
        plot = new uPlot(
          {
            width: width(),
            height: 220,
            series: [
              {},
              { label: 'tokens', stroke: '#2f6fdf', width: 2 },
              ...(priced$ ? [{ label: 'cost USD (cumulative)', stroke: '#c2410c', width: 2, scale: 'usd' }] : []),
            ],
            axes: [
              { ...axis },
              { ...axis, values: axisLabels('') },
              ...(priced$ ? [{ ...axis, scale: 'usd', side: 1, values: axisLabels('$') }] : []),
            ],
          },
          priced$ ? [xs, tokens, costs] : [xs, tokens],
          el,
        );
        observer = new ResizeObserver(() => plot?.setSize({ width: width(), height: 220 }));
        observer.observe(el);
      },
      (e) => setSummary(errorText(e)),
    );
    return () => (observer?.disconnect(), plot?.destroy());
  }, [id]);
  return (
    <>
      <figure class="usage">
        <div ref={box} role="img" aria-label={`Usage and cost over time: ${summary}`} />
        <figcaption>{summary}</figcaption>
      </figure>
      {byModel.length > 0 && (
        <div class="table-wrap">
          <table class="by-model">
            <caption class="sr-only">Tokens by model</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">
                  Calls
                </th>
                <th scope="col" class="num">
                  In
                </th>
                <th scope="col" class="num">
                  Out
                </th>
                <th scope="col" class="num">
                  Total
                </th>
              </tr>
            </thead>
            <tbody>
              {byModel.map((m) => (
                <tr key={m.model}>
                  <td>
                    <code>{m.model}</code>
                  </td>
                  <td class="num">{m.rows}</td>
                  <td class="num">{m.input.toLocaleString()}</td>
                  <td class="num">{m.output.toLocaleString()}</td>
                  <td class="num">{m.total.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The agent's log, newest first, filtered by level; each entry's data one click away. */
function Logs({ id }: { id: string }) {
  const [logs, setLogs] = useState<LogEntry[] | null>(null);
  const [error, setError] = useState('');
  const [levels, setLevels] = useState<Set<string>>(new Set(['info', 'warn', 'error']));
  const load = () =>
    client.logs(id).then(
      (r) => setLogs(r.logs),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void load(), [id]);
  useEvents(
    (event) => {
      if (event.agent_id === id && event.event_type === 'turn.completed') void load();
    },
    [id],
  );
  const shown = (logs ?? []).filter((entry) => levels.has(entry.level)).sort((a, b) => b.id - a.id);
  return (
    <>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="row" role="group" aria-label="Levels">
        {LEVELS.map((level) => (
          <button
            type="button"
            class="small"
            aria-pressed={levels.has(level)}
            onClick={() =>
              setLevels((old) => {
                const next = new Set(old);
                if (!next.delete(level)) next.add(level);
                return next;
              })
            }
          >
            {level}
          </button>
        ))}
        <span class="muted">
          {shown.length} of {logs?.length ?? 0}
        </span>
      </div>
      <div class="table-wrap">
        <table class="logs fixed stacked">
          <caption class="sr-only">Log entries, newest first</caption>
          <colgroup>
            <col class="c-time" />
            <col class="c-level" />
            <col class="c-origin" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Level</th>
              <th scope="col">From</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((entry) => (
              <tr key={entry.id}>
                <td title={new Date(entry.created_at).toLocaleString()}>{time(entry.created_at)}</td>
                <td class={`level-${entry.level}`}>{entry.level}</td>
                <td>{entry.origin ?? entry.event ?? ''}</td>
                <td>
                  {entry.data ? (
                    <details>
                      <summary>{entry.message}</summary>
                      <pre tabIndex={0}>{entry.data}</pre>
                    </details>
                  ) : (
                    entry.message
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {logs && shown.length === 0 && <p class="muted row">No entry at these levels.</p>}
      </div>
    </>
  );
}

const IMAGES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

function Files({ id }: { id: string }) {
  const [files, setFiles] = useState<FileInfo[]>([]);
  const [shown, setShown] = useState<{ path: string; text: string; image?: string } | null>(null);
  const [error, setError] = useState('');
  const list = () =>
    client.files(id).then(
      (r) => setFiles(r.files),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void list(), [id]);
  // Images are previewed (a data: URL, which the page's policy allows for images only); other binary files are
  // downloaded.
  const view = async (path: string) => {
    try {
      const image = IMAGES[path.split('.').pop()?.toLowerCase() ?? ''];
      if (image)
        return setShown({
          path,
          text: '',
          image: `data:${image};base64,${(await client.file(id, path, 'base64')).content}`,
        });
      const f = await client.file(id, path, 'utf-8');
      setShown({ path, text: f.encoding === 'base64' ? '(binary file: download it)' : f.content });
    } catch (e) {
      setError(errorText(e));
    }
  };
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
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Files</caption>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Size</th>
              <th scope="col">Changed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {files.map((f) => (
              <tr key={f.path}>
                <td>{f.path}</td>
                <td class="num">{f.size.toLocaleString()} B</td>
                <td>{time(f.updated_at)}</td>
                <td>
                  <button type="button" onClick={() => view(f.path)} aria-label={`View ${f.path}`}>
                    View
                  </button>{' '}
                  <button type="button" onClick={() => download(f.path)} aria-label={`Download ${f.path}`}>
                    Download
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form class="row" onSubmit={upload}>
        <label for="upload">Upload a file</label>
        <input id="upload" name="upload" type="file" />
        <button type="submit" class="primary">
          Upload
        </button>
      </form>
      {shown && (
        <>
          <h3>{shown.path}</h3>
          {shown.image ? (
            <img class="preview" src={shown.image} alt={`Preview of ${shown.path}`} />
          ) : (
            <pre tabIndex={0}>{shown.text}</pre>
          )}
        </>
      )}
    </>
  );
}

export function AgentDetails({ id }: { id: string }) {
  const [tab, setTab] = useState<Tab>('Usage');
  return (
    <section aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <div class="tabs" role="group" aria-label="Panels">
        {TABS.map((name) => (
          <button type="button" aria-pressed={tab === name} onClick={() => setTab(name)}>
            {name}
          </button>
        ))}
      </div>
      {tab === 'History' ? (
        <History id={id} />
      ) : tab === 'Usage' ? (
        <Usage id={id} />
      ) : tab === 'Files' ? (
        <Files id={id} />
      ) : tab === 'Config' ? (
        <ConfigEditor id={id} />
      ) : tab === 'Logs' ? (
        <Logs id={id} />
      ) : tab === 'Timeline' ? (
        <Timeline id={id} />
      ) : tab === 'Credentials' ? (
        <Credentials id={id} />
      ) : tab === 'MCP' ? (
        <AgentMcp id={id} />
      ) : tab === 'Timers' ? (
        <Timers id={id} />
      ) : tab === 'Backup' ? (
        <Backup id={id} />
      ) : tab === 'Memory' ? (
        <Memory id={id} />
      ) : (
        <Loops id={id} />
      )}
    </section>
  );
}
