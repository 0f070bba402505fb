/**
 * The month's spend of the loaded agents (`GET /usage`, from their ledgers): tokens per day as a chart
 * (uPlot bars) and a table by model with calls, tokens and cost; reloaded on `llm.completed`.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { client } from './api.js';
import { axisLabels } from './chart.js';
import { useLive } from './util.js';
import { count, money } from './words.js';

export function Spend() {
  const { data: days } = useLive(
    () => client.usageMonth('day'),
    (type) => type === 'llm.completed',
  );
  const { data: models, error } = useLive(
    () => client.usageMonth('model'),
    (type) => type === 'llm.completed',
  );
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    const groups = days?.groups ?? [];
    if (!el || groups.length === 0) return;
    const xs = groups.map((g) => Date.parse(`${g.key}T12:00:00`) / 1000);
    const axis = {
      stroke: '#8a93a3',
      grid: { stroke: 'rgba(138,147,163,.25)' },
      ticks: { stroke: 'rgba(138,147,163,.4)' },
    };
    const width = () => Math.max(240, Math.min(720, el.clientWidth));
    // The x axis is this month, whatever days have spend (one day alone would stretch over years).
    const now = new Date();
    const first = new Date(now.getFullYear(), now.getMonth(), 1).getTime() / 1000;
    const last = new Date(now.getFullYear(), now.getMonth() + 1, 1).getTime() / 1000;
    const plot = new uPlot(
      {
        width: width(),
        height: 180,
        legend: { show: false },
        scales: { x: { time: true, range: () => [first, last] } },
        series: [
          {},
          {
            label: 'tokens',
            stroke: '#2f6fdf',
            fill: 'rgba(47,111,223,.35)',
            paths: uPlot.paths.bars!({ size: [0.6, 40] }),
            points: { show: false },
          },
        ],
        axes: [{ ...axis }, { ...axis, values: axisLabels('') }],
      },
      [xs, groups.map((g) => g.input + g.output)],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 180 }));
    observer.observe(el);
    return () => (observer.disconnect(), plot.destroy());
  }, [days]);
  const totals = (days?.groups ?? []).reduce(
    (sum, g) => ({ tokens: sum.tokens + g.input + g.output, cost: sum.cost + (g.cost_usd ?? 0) }),
    { tokens: 0, cost: 0 },
  );
  return (
    <section aria-labelledby="spend-title" class="panel">
      <h2 id="spend-title">Spend this month</h2>
      {error && <p class="muted">{error}</p>}
      <p class="muted">
        {count(totals.tokens)} tokens, {money(totals.cost)} across the loaded agents
        {(models?.groups ?? []).some((g) => g.cost_usd === null)
          ? ' (some models have no price in the settings: their tokens count, their cost does not)'
          : ''}
        .
      </p>
      <figure class="usage">
        <div
          ref={box}
          role="img"
          aria-label={`Tokens per day this month: ${(days?.groups ?? []).map((g) => `${g.key} ${g.input + g.output}`).join(', ') || 'none'}`}
        />
      </figure>
      {(models?.groups.length ?? 0) > 0 && (
        <div class="table-wrap">
          <table class="spend-models">
            <caption class="sr-only">Spend by model this month</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" class="num">
                  Calls
                </th>
                <th scope="col" class="num">
                  Tokens
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {models!.groups.map((g) => (
                <tr key={g.key}>
                  <td>
                    <code>{g.key}</code>
                  </td>
                  <td class="num">{g.calls}</td>
                  <td class="num">{count(g.input + g.output)}</td>
                  <td class="num">{g.cost_usd === null ? <span class="muted">no price</span> : money(g.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
