/**
 * Any JSON value the daemon answers, shown as readable lists and tables (Preact text nodes, never
 * innerHTML): an array of objects becomes a table, an object a definition list, a time in ms a clock
 * time. The views use it for the answers whose shape belongs to another extension (so a new field
 * shows up without a console change) instead of printing raw JSON.
 */
import { time } from './util.js';
import { fieldWord } from './words.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);
/** Epoch milliseconds under a key that names a time (`createdAt`, `created_at`, `lastUsedAt`, …). */
const isTime = (key: string, value: unknown) =>
  typeof value === 'number' && value > 1e12 && /(At|_at|time|Time)$/.test(key);
const MAX_COLUMNS = 8;

export function Readable({ value, name = '', depth = 0 }: { value: unknown; name?: string; depth?: number }) {
  if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
  if (isTime(name, value)) return <>{time(value as number)}</>;
  if (typeof value !== 'object') return <>{String(value)}</>;
  // Deeper than this a short JSON text is more readable than nested tables.
  if (depth > 3) return <code>{JSON.stringify(value)}</code>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>;
    if (value.every(isRecord)) {
      const columns = [...new Set(value.flatMap((row) => Object.keys(row)))].slice(0, MAX_COLUMNS);
      return (
        <table class="readable">
          <thead>
            <tr>
              {columns.map((column) => (
                <th scope="col" key={column} title={column}>
                  {fieldWord(column)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {value.map((row, index) => (
              <tr key={index}>
                {columns.map((column) => (
                  <td key={column}>
                    <Readable value={row[column]} name={column} depth={depth + 1} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    }
    return (
      <ul class="readable">
        {value.map((item, index) => (
          <li key={index}>
            <Readable value={item} depth={depth + 1} />
          </li>
        ))}
      </ul>
    );
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <dl class="readable">
      {entries.map(([key, item]) => (
        <div key={key}>
          <dt title={key}>{fieldWord(key)}</dt>
          <dd>
            <Readable value={item} name={key} depth={depth + 1} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
