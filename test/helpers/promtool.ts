/**
 * Prometheus's own linter for the text exposition format: `promtool check metrics` (Debian's `prometheus`
 * package ships it; `.ci/run` installs it). `findPromtool()` says where it is (a test skips, saying why, without
 * it); `lintMetrics(text)` pipes a scrape to it and resolves with its exit code and what it said.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/promtool', '/usr/local/bin/promtool'];

export function findPromtool(): string | undefined {
  const found = CANDIDATES.find((path) => existsSync(path));
  if (found) return found;
  const which = spawnSync('which', ['promtool'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() || undefined : undefined;
}

export async function lintMetrics(text: string): Promise<{ code: number | null; output: string }> {
  const promtool = findPromtool();
  if (!promtool) throw new Error('promtool is not installed (Debian package prometheus)');
  const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = new Promise<number | null>((done) => child.once('close', done));
  child.stdin.end(text);
  return { code: await code, output };
}
