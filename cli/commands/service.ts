/**
 * `agt service install|uninstall`: a systemd user unit for `agtd`, in `$XDG_CONFIG_HOME/systemd/user/`
 * (else `~/.config/systemd/user/`). The unit names the data directory this `agt` uses (so both agree),
 * this Node and this checkout's `bin/agtd.mjs`. It is written, never enabled or started: the commands to
 * do that are printed.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDirOf } from '../connection.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { integer } from './args.js';

const UNIT = 'agtd.service';

export function unitDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), '.config'), 'systemd', 'user');
}

/** This checkout's `bin/agtd.mjs`, found upward from this module (the sources or the build in dist/). */
function agtdPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'bin', 'agtd.mjs');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new CliError('cannot find bin/agtd.mjs beside this agt', EXIT.failed);
    dir = parent;
  }
}

/**
 * A quoted value in a unit line: `\` and `"` escaped, `%` doubled (specifiers expand everywhere), and in
 * `ExecStart=` also `$` (variables expand there, not in `Environment=`).
 */
const unitValue = (value: string, exec = false) => {
  const text = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  return `"${exec ? text.replace(/\$/g, '$$$$') : text}"`;
};

export function unitText(options: { dataDir: string; port?: number; env?: NodeJS.ProcessEnv }): string {
  const env = options.env ?? process.env;
  const agtd = agtdPath();
  const vars: Array<[string, string]> = [
    ['AGT_USER_DATA_DIR', options.dataDir],
    // npm (MCP package installs) and the sandbox tools are found on this PATH.
    ['PATH', `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`],
  ];
  const port = options.port ?? (env.AGT_DAEMON_PORT ? Number(env.AGT_DAEMON_PORT) : undefined);
  if (port !== undefined) vars.push(['AGT_DAEMON_PORT', String(port)]);
  if (env.AGT_DAEMON_HOST) vars.push(['AGT_DAEMON_HOST', env.AGT_DAEMON_HOST]);
  return [
    '# Written by `agt service install`. Enable it with: systemctl --user daemon-reload && systemctl --user enable --now agtd',
    '[Unit]',
    'Description=agt agent runtime daemon',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${unitValue(process.execPath, true)} ${unitValue(agtd, true)}`,
    `WorkingDirectory=${dirname(dirname(agtd)).replace(/%/g, '%%')}`,
    ...vars.map(([name, value]) => `Environment=${unitValue(`${name}=${value}`)}`),
    'Restart=on-failure',
    'RestartSec=5',
    // agtd stops its agents within 20 s of SIGTERM.
    'TimeoutStopSec=30',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

export async function install(ctx: Ctx, options: { print?: boolean; force?: boolean; port?: string }): Promise<void> {
  const port = integer(options.port, '--port', 0);
  const text = unitText({ dataDir: dataDirOf(ctx.options), ...(port !== undefined ? { port } : {}) });
  const path = join(unitDir(), UNIT);
  if (options.print) return ctx.out.result({ path, unit: text, written: false }, () => process.stdout.write(text));
  if (existsSync(path) && !options.force) throw new CliError(`${path} exists; --force replaces it (or --print shows the new one)`, EXIT.failed);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o644 });
  ctx.out.result({ path, unit: text, written: true }, () => {
    ctx.out.line(`wrote ${path}`);
    ctx.out.line(ctx.out.dim('start it now and at login: systemctl --user daemon-reload && systemctl --user enable --now agtd'));
    ctx.out.line(ctx.out.dim('keep it running after logout: loginctl enable-linger $USER'));
  });
}

export async function uninstall(ctx: Ctx): Promise<number | void> {
  const path = join(unitDir(), UNIT);
  const existed = existsSync(path);
  rmSync(path, { force: true });
  ctx.out.result({ path, removed: existed }, () => ctx.out.line(existed ? `deleted ${path} (systemctl --user daemon-reload to forget it)` : `there was no ${path}`));
  return existed ? undefined : EXIT.failed;
}
