/**
 * Output: colours only on a terminal (and never with NO_COLOR or --no-color), `--json` for scripts,
 * small aligned tables for people.
 */
export interface OutputOptions {
  json?: boolean;
  color?: boolean;
}

export class Output {
  readonly json: boolean;
  readonly colors: boolean;

  constructor(options: OutputOptions = {}, stream: NodeJS.WriteStream = process.stdout) {
    this.json = options.json === true;
    this.colors =
      options.color !== false && stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
  }

  private paint(code: string, text: string): string {
    return this.colors ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  bold = (text: string) => this.paint('1', text);
  dim = (text: string) => this.paint('2', text);
  red = (text: string) => this.paint('31', text);
  green = (text: string) => this.paint('32', text);
  yellow = (text: string) => this.paint('33', text);
  cyan = (text: string) => this.paint('36', text);

  /** A state word coloured by what it means. */
  state(state: string): string {
    if (state === 'error') return this.red(state);
    if (state.startsWith('awaiting') || state === 'suspended') return this.yellow(state);
    if (state === 'thinking' || state === 'tool_use' || state === 'active') return this.green(state);
    return state;
  }

  line(text = ''): void {
    process.stdout.write(`${text}\n`);
  }

  /** A note for the person, on stderr so stdout stays the result. */
  note(text: string): void {
    process.stderr.write(`${text}\n`);
  }

  printJson(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Prints `value` as JSON with --json, else runs `human`. */
  result(value: unknown, human: () => void): void {
    if (this.json) this.printJson(value);
    else human();
  }

  table(headers: string[], rows: string[][]): void {
    const visible = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').length;
    const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => visible(row[i] ?? ''))));
    const render = (cells: string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visible(cell))))
        .join('  ')
        .trimEnd();
    this.line(this.dim(render(headers)));
    for (const row of rows) this.line(render(row));
  }
}

/** Compact JSON of tool arguments for one line, cut at `max` characters. */
export function compact(value: unknown, max = 120): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}
