/**
 * `agt console`: asks the daemon for a one-time login code and prints the console URL carrying it in the
 * fragment (`/console/#code=...`: a browser never sends a fragment to a server, so it lands in no log).
 * The daemon token itself never goes into the URL. `--open` hands the URL to the desktop's opener.
 */
import { spawn } from 'node:child_process';
import type { Ctx } from '../context.js';

function opener(): [string, string[]] {
  if (process.platform === 'darwin') return ['open', []];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '']];
  return ['xdg-open', []];
}

export async function openConsole(ctx: Ctx, options: { open?: boolean }): Promise<void> {
  const minted = await ctx.client.post('/console/login-codes', {});
  const url = `${ctx.client.connection.url.replace(/\/+$/, '')}${minted.path}`;
  ctx.out.result({ url, expiresAt: minted.expiresAt }, () => {
    ctx.out.line(url);
    ctx.out.line(ctx.out.dim('one-time link: valid 60 s, for one browser login'));
  });
  if (options.open) {
    const [command, args] = opener();
    const child = spawn(command, [...args, url], { stdio: 'ignore', detached: true });
    child.on('error', () => ctx.out.line(ctx.out.dim(`could not run ${command}: open the link above by hand`)));
    child.unref();
  }
}
