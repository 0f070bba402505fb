/**
 * Evals (docs/evals.md): the runs kept (`GET /evals/runs`), one run with a table of its variants and each
 * variant's case results (`GET /evals/runs/{runId}`, reloaded on its `eval.*` events, so a running run shows
 * its progress; Cancel while it runs), and the answers of two runs side by side, case by case (the first
 * variant's first repeat of each, as `agt eval diff` compares them).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { client, type EvalRun, type EvalRunSummary } from './api.js';
import { events } from './stream.js';
import { errorText, useLive } from './util.js';
import { money, relative, Term, type Tone } from './words.js';

const RUN: Record<string, [string, Tone]> = {
  running: ['Running', 'busy'],
  passed: ['Passed', 'ok'],
  failed: ['Failed', 'error'],
  error: ['Error', 'error'],
  cancelled: ['Cancelled', 'off'],
  interrupted: ['Interrupted', 'wait'],
};
const RunBadge = ({ status }: { status: string }) => {
  const [word, tone] = RUN[status] ?? [status, 'info' as Tone];
  return <Term word={word} raw={status} tone={tone} />;
};
const percent = (rate: number) => `${Math.round(rate * 100)}%`;
const seconds = (ms: number | null) =>
  ms === null ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
/** A table's box that scrolls sideways on a narrow screen, reachable from the keyboard. */
const Scroll = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
    {children}
  </div>
);
const runHref = (id: string) => `#/evals/${encodeURIComponent(id)}`;

/** `#/evals` (the list), `#/evals/<runId>` (a run), `#/evals/diff/<runA>/<runB>` (two runs' answers). */
export function EvalsView({ arg }: { arg: string | undefined }) {
  const diff = /^diff\/([^/]+)\/([^/]+)$/.exec(arg ?? '');
  if (diff) return <EvalDiff left={decodeURIComponent(diff[1]!)} right={decodeURIComponent(diff[2]!)} />;
  return arg ? <EvalRunPage id={decodeURIComponent(arg)} /> : <EvalRuns />;
}

function EvalRuns() {
  const { data, error } = useLive(
    () => client.evalRuns(),
    (type) => type.startsWith('eval.'),
  );
  const [picked, setPicked] = useState<string[]>([]);
  const toggle = (id: string) =>
    setPicked((all) => (all.includes(id) ? all.filter((x) => x !== id) : [...all.slice(-1), id]));
  const runs = data?.runs ?? [];
  return (
    <section aria-labelledby="evals-title">
      <h1 id="evals-title">Evals</h1>
      <p class="hint">
        Runs of eval suites on throwaway copies of an agent, newest first. Start one with{' '}
        <code>agt eval run suite.json --agent NAME</code>.
      </p>
      <div class="toolbar">
        <button
          type="button"
          class="primary"
          disabled={picked.length !== 2}
          onClick={() => (location.hash = `#/evals/diff/${picked.map(encodeURIComponent).join('/')}`)}
        >
          Compare answers
        </button>
        <span class="muted">{picked.length} of 2 picked</span>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {data && runs.length === 0 && <p>No eval run yet.</p>}
      {runs.length > 0 && (
        <Scroll label="Eval runs">
          <table class="eval-runs">
            <thead>
              <tr>
                <th scope="col">
                  <span class="sr-only">Pick</span>
                </th>
                <th scope="col">Suite</th>
                <th scope="col">Agent</th>
                <th scope="col">Status</th>
                <th scope="col">Pass rate by variant</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.id} data-run-id={run.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Pick ${run.suite} of ${relative(Date.parse(run.createdAt))} (${run.id})`}
                      checked={picked.includes(run.id)}
                      onChange={() => toggle(run.id)}
                    />
                  </td>
                  <td>
                    <a href={runHref(run.id)}>{run.suite}</a>
                  </td>
                  <td>
                    <a href={`#/agent/${encodeURIComponent(run.agentId)}`}>{run.agentName}</a>
                  </td>
                  <td>
                    <RunBadge status={run.status} />
                  </td>
                  <td>
                    <PassRates run={run} />
                  </td>
                  <td title={run.createdAt}>{relative(Date.parse(run.createdAt))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}

function PassRates({ run }: { run: EvalRunSummary }) {
  return (
    <ul class="inline-list">
      {run.variants.map((v) => (
        <li key={v.label}>
          {v.label}: <strong>{percent(v.passRate)}</strong>{' '}
          <span class="muted">
            ({v.passed}/{v.cases})
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The run, reloaded on each of its own `eval.*` events. */
function useRun(id: string) {
  const [run, setRun] = useState<EvalRun | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    let alive = true;
    const load = () =>
      client.evalRun(id).then(
        (value) => alive && (setRun(value), setError('')),
        (e) => alive && setError(errorText(e)),
      );
    void load();
    const off = events.on((event) => {
      if (event.event_type.startsWith('eval.') && (event.payload as { run_id?: string }).run_id === id) void load();
    });
    return () => {
      alive = false;
      off();
    };
  }, [id]);
  return { run, error, setRun, setError };
}

function EvalRunPage({ id }: { id: string }) {
  const { run, error, setRun, setError } = useRun(id);
  const [cancelling, setCancelling] = useState(false);
  const cancel = () => {
    setCancelling(true);
    client.cancelEvalRun(id).then(
      (value) => (setRun(value), setCancelling(false)),
      (e) => (setError(errorText(e)), setCancelling(false)),
    );
  };
  if (!run)
    return (
      <section aria-labelledby="eval-title">
        <h1 id="eval-title">Eval run</h1>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : (
          <p>Loading…</p>
        )}
      </section>
    );
  return (
    <section aria-labelledby="eval-title" class="eval-run">
      <p>
        <a href="#/evals">← All eval runs</a>
      </p>
      <div class="agent-head">
        <h1 id="eval-title">{run.suite}</h1>
        <RunBadge status={run.status} />
        {run.status === 'running' && (
          <button type="button" class="danger" disabled={cancelling} onClick={cancel}>
            Cancel run
          </button>
        )}
      </div>
      <p class="muted">
        On <a href={`#/agent/${encodeURIComponent(run.agentId)}`}>{run.agentName}</a>, started{' '}
        {relative(Date.parse(run.createdAt))}
        {run.repeat > 1 ? `, each case ${run.repeat} times` : ''}. <Term word="Run id" raw={run.id} />
      </p>
      <p>
        <label for="eval-progress">
          {run.results.length} of {run.total} case runs done
        </label>{' '}
        <progress id="eval-progress" max={run.total} value={run.results.length} />
      </p>
      {(error || run.error) && (
        <p role="alert" class="error">
          {error || `${run.error!.code}: ${run.error!.message}`}
        </p>
      )}
      <Scroll label="Variants">
        <table class="eval-variants">
          <caption>Variants side by side</caption>
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col">Pass rate</th>
              <th scope="col" class="num">
                Passed / failed / errors
              </th>
              <th scope="col" class="num">
                Cost
              </th>
              <th scope="col" class="num">
                Model calls
              </th>
              <th scope="col" class="num">
                Tool calls
              </th>
              <th scope="col" class="num">
                Median time
              </th>
              <th scope="col">Flaky</th>
            </tr>
          </thead>
          <tbody>
            {run.variants.map((v) => (
              <tr key={v.label}>
                <th scope="row">
                  {v.label}
                  {v.model && v.model !== v.label && <div class="muted">{v.model}</div>}
                </th>
                <td>
                  <strong>{percent(v.passRate)}</strong>
                </td>
                <td class="num">
                  {v.passed} / {v.failed} / {v.errors}
                </td>
                <td class="num">{v.cost === null ? 'no price' : money(v.cost)}</td>
                <td class="num">{v.modelCalls}</td>
                <td class="num">{v.toolCalls}</td>
                <td class="num">{seconds(v.medianMs)}</td>
                <td>{v.flaky.length ? v.flaky.join(', ') : 'none'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
      {run.variants.map((v) => (
        <CaseResults key={v.label} run={run} variant={v.label} />
      ))}
    </section>
  );
}

function CaseResults({ run, variant }: { run: EvalRun; variant: string }) {
  const results = run.results.filter((r) => r.variant === variant);
  const slug = `eval-cases-${run.variants.findIndex((v) => v.label === variant)}`;
  return (
    <section aria-labelledby={slug}>
      <h2 id={slug}>Cases of {variant}</h2>
      {results.length === 0 ? (
        <p class="muted">No case has ended yet.</p>
      ) : (
        <Scroll label={`Cases of ${variant}`}>
          <table class="eval-cases">
            <thead>
              <tr>
                <th scope="col">Case</th>
                <th scope="col">Status</th>
                <th scope="col">Failed assertions</th>
                <th scope="col">Answer</th>
                <th scope="col" class="num">
                  Time
                </th>
              </tr>
            </thead>
            <tbody>
              {results.map((r) => {
                const failed = r.assertions.filter((a) => !a.pass);
                return (
                  <tr key={`${r.case}-${r.repeat}`} data-case={r.case}>
                    <th scope="row">
                      {r.case}
                      {run.repeat > 1 && <span class="muted"> #{r.repeat + 1}</span>}
                    </th>
                    <td>
                      <RunBadge status={r.status} />
                    </td>
                    <td>
                      {r.error && (
                        <p class="error">
                          {r.error.code}: {r.error.message}
                        </p>
                      )}
                      {failed.length === 0 && !r.error ? (
                        <span class="muted">none of {r.assertions.length}</span>
                      ) : (
                        <ul class="failed-assertions">
                          {failed.map((a, i) => (
                            <li key={i}>
                              <code>{a.kind}</code> {a.detail}
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td class="answer">{r.answer ?? <span class="muted">no answer</span>}</td>
                    <td class="num">{seconds(r.ms)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}

function EvalDiff({ left, right }: { left: string; right: string }) {
  const a = useRun(left);
  const b = useRun(right);
  const error = a.error || b.error;
  const first = (run: EvalRun | undefined) => {
    const label = run?.variants[0]?.label;
    return new Map((run?.results ?? []).filter((r) => r.variant === label && r.repeat === 0).map((r) => [r.case, r]));
  };
  const l = first(a.run);
  const r = first(b.run);
  const names = [...new Set([...l.keys(), ...r.keys()])];
  const title = (run: EvalRun | undefined, id: string) =>
    run ? `${run.suite}, ${run.variants[0]?.label ?? ''}, ${relative(Date.parse(run.createdAt))}` : id;
  return (
    <section aria-labelledby="eval-diff-title">
      <p>
        <a href="#/evals">← All eval runs</a>
      </p>
      <h1 id="eval-diff-title">Answers of two runs</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {a.run && b.run && (
        <Scroll label="Answers side by side">
          <table class="eval-diff fixed">
            <thead>
              <tr>
                <th scope="col">Case</th>
                <th scope="col">
                  <a href={runHref(left)}>{title(a.run, left)}</a>
                </th>
                <th scope="col">
                  <a href={runHref(right)}>{title(b.run, right)}</a>
                </th>
              </tr>
            </thead>
            <tbody>
              {names.map((name) => {
                const x = l.get(name);
                const y = r.get(name);
                const same = (x?.answer ?? null) === (y?.answer ?? null);
                return (
                  <tr key={name} data-case={name} class={same ? 'same' : 'differs'}>
                    <th scope="row">
                      {name}
                      <div class="muted">{same ? 'same answer' : 'answers differ'}</div>
                    </th>
                    {[x, y].map((side, i) => (
                      <td key={i} class="answer">
                        {side ? <RunBadge status={side.status} /> : <span class="muted">not in this run</span>}{' '}
                        {side?.answer ?? ''}
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}
