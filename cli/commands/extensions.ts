/**
 * `agt extensions [ls]` (what the manifest lists and how each runs), `agt extensions on|off <name>` and
 * `agt extensions config <name> [--set key.path=value ...] [--unset key.path ...]`: an extension's
 * options (`GET|PATCH /runtime/extensions/{name}/config`), validated by the daemon against the
 * extension's options schema, applied at once where the extension can, else after a restart.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

export interface ExtensionRow {
  name: string;
  version: string | null;
  enabled: boolean;
  state?: string;
  error: string | null;
  prefix: string | null;
}

export async function list(ctx: Ctx): Promise<void> {
  const { extensions } = await ctx.client.get<{ extensions: ExtensionRow[] }>('/runtime/extensions');
  ctx.out.result(extensions, () =>
    ctx.out.table(
      ['NAME', 'VERSION', 'STATE', 'ROUTES', 'ERROR'],
      extensions.map((e) => [
        e.name,
        e.version ?? '-',
        ctx.out.state(e.state ?? (e.enabled ? 'loaded' : 'disabled')),
        e.prefix ?? '-',
        e.error ?? '',
      ]),
    ),
  );
}

/** `agt extensions on|off <name>`: `PATCH /runtime/extensions/{name}`. */
export async function setEnabled(ctx: Ctx, name: string, enabled: boolean): Promise<void> {
  const row = await ctx.client.request('PATCH', `/runtime/extensions/${seg(name)}`, { enabled });
  ctx.out.result(row, () => {
    if (!enabled) return ctx.out.line(`${name} is off: stopped, its routes answer 503`);
    ctx.out.line(row.restartRequired ? `${name} is on: it loads at the next start of the daemon` : `${name} is on`);
  });
}

/** `a.b.c=value` into a merge patch `{a: {b: {c: value}}}`; the value is JSON when it parses as JSON. */
function assign(patch: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  if (keys.some((key) => key === '')) throw new CliError(`bad key path "${path}"`, EXIT.usage);
  let into = patch;
  for (const key of keys.slice(0, -1)) {
    const next = into[key];
    into = (into[key] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
  }
  into[keys.at(-1)!] = value;
}

export function patchOf(sets: readonly string[], unsets: readonly string[]): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const assignment of sets) {
    const at = assignment.indexOf('=');
    if (at <= 0) throw new CliError(`--set takes key.path=value, got "${assignment}"`, EXIT.usage);
    const raw = assignment.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // A plain string.
    }
    assign(patch, assignment.slice(0, at), value);
  }
  // In a merge patch null removes the key: the option goes back to its default.
  for (const path of unsets) assign(patch, path, null);
  return patch;
}

export async function config(ctx: Ctx, name: string, options: { set?: string[]; unset?: string[] }): Promise<void> {
  const path = `/runtime/extensions/${seg(name)}/config`;
  if (!options.set?.length && !options.unset?.length) {
    const view = await ctx.client.get(path);
    return ctx.out.result(view, () => {
      ctx.out.printJson(view.config);
      ctx.out.note(ctx.out.dim(`in force (defaults applied): ${JSON.stringify(view.effective)}`));
      ctx.out.note(
        ctx.out.dim(view.reconfigurable ? 'changes apply at once' : 'changes apply at the next daemon start'),
      );
    });
  }
  const changed = await ctx.client.request('PATCH', path, patchOf(options.set ?? [], options.unset ?? []));
  ctx.out.result(changed, () => {
    ctx.out.line(`${name}: options saved in the data directory${changed.applied ? ' and applied' : ''}`);
    if (changed.restartRequired)
      ctx.out.note(
        ctx.out.yellow(
          `${name} applies them at the next daemon start (restart the daemon: agt daemon stop, then agtd; agt restart restarts an agent, not the daemon)`,
        ),
      );
  });
}
