/**
 * A server's recent log lines (stderr and connection events), bounded by count and by line length so a
 * server that floods stderr costs a fixed amount of memory. Known secret values are scrubbed from each
 * line before it is kept: these lines are served by `GET /agents/{id}/mcp`.
 */
const MAX_LINE = 500;
/** Of one chunk, only this tail is looked at (a flood cannot make one chunk expensive). */
const MAX_CHUNK = 64 * 1024;

export class LogRing {
  private readonly lines: string[] = [];
  private partial = '';
  private secrets: string[] = [];

  constructor(private readonly max: number) {}

  setSecrets(secrets: string[]): void {
    this.secrets = secrets.filter((s) => s.length >= 4);
  }

  scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('[redacted]');
    return out;
  }

  /** A status line of our own (`connected`, `exited`, ...). */
  note(text: string): void {
    this.push(`[agt] ${text}`);
  }

  /** Raw stderr text; split into lines, the last partial line held until its end arrives. */
  write(chunk: string): void {
    const text = this.partial + (chunk.length > MAX_CHUNK ? chunk.slice(-MAX_CHUNK) : chunk);
    const parts = text.split('\n');
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE);
    for (const line of parts) if (line.trim()) this.push(line);
  }

  recent(): string[] {
    return this.partial.trim() ? [...this.lines, this.scrub(this.partial)].slice(-this.max) : [...this.lines];
  }

  private push(line: string): void {
    const clean = this.scrub(line.replace(/\r$/, ''));
    this.lines.push(clean.length > MAX_LINE ? `${clean.slice(0, MAX_LINE)}…` : clean);
    if (this.lines.length > this.max) this.lines.splice(0, this.lines.length - this.max);
  }
}
