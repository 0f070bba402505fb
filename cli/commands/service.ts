/**
 * `agt service install|uninstall`: a systemd user unit for `agtd`, in `$XDG_CONFIG_HOME/systemd/user/`
 * (else `~/.config/systemd/user/`). The unit names the data directory this `agt` uses (so both agree),
 * this Node and this checkout's `bin/agtd.mjs`, and the daemon's variables this shell sets (secrets left
 * out). It is written, never enabled or started: the commands to do that are printed.
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
export function agtdPath(): string {
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

/**
 * The daemon's variables (docs/environment.md, the kernel's and the shipped extensions') that the unit
 * carries when this shell sets them, so the service runs as `agtd` typed here would. Secrets are left
 * out (the unit file is readable by others): see {@link SECRETS}.
 */
export const CARRIED = [
  'AGT_DAEMON_HOST',
  'AGT_DAEMON_ALLOWED_HOSTS',
  'AGT_DAEMON_BEHIND_PROXY',
  'AGT_EXTENSIONS',
  'AGT_LOG_LEVEL',
  'AGT_LOG_FORMAT',
  'AGT_OWNER_PASSPHRASE_FILE',
  'AGT_SHUTDOWN_TIMEOUT_MS',
  'AGT_KDF_COST',
  'MESH_HOST',
  'MESH_PORT',
  'MESH_PUBLIC_NAMES',
  'DOCKER_HOST',
] as const;
/** Carried as absolute paths: the unit runs in the checkout's folder, not this shell's. */
const PATHS = new Set<string>(['AGT_EXTENSIONS', 'AGT_OWNER_PASSPHRASE_FILE']);
/** Set in the shell but never written into the unit, with what to use instead. */
export const SECRETS: Record<string, string> = {
  AGT_OWNER_PASSPHRASE: 'AGT_OWNER_PASSPHRASE_FILE (a file only you can read)',
  AGT_DAEMON_TOKEN: "the data directory's daemon-token file",
};

export function unitText(options: {
  dataDir: string;
  port?: number;
  settings?: string;
  env?: NodeJS.ProcessEnv;
}): string {
  const env = options.env ?? process.env;
  const agtd = agtdPath();
  const vars: Array<[string, string]> = [
    ['AGT_USER_DATA_DIR', options.dataDir],
    // npm (MCP package installs) and the sandbox tools are found on this PATH.
    ['PATH', `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`],
  ];
  // A settings file not named settings.json is found only by its own variable.
  const settings = options.settings ?? env.AGT_DAEMON_SETTINGS;
  if (settings) vars.push(['AGT_DAEMON_SETTINGS', resolve(settings)]);
  const port = options.port ?? (env.AGT_DAEMON_PORT ? Number(env.AGT_DAEMON_PORT) : undefined);
  if (port !== undefined) vars.push(['AGT_DAEMON_PORT', String(port)]);
  for (const name of CARRIED) {
    const value = env[name];
    if (value) vars.push([name, PATHS.has(name) ? resolve(value) : value]);
  }
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

/** What the shell sets that the unit leaves out, and what to use instead. */
function leftOut(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(SECRETS)
    .filter(([name]) => env[name])
    .map(([name, instead]) => `${name} is a secret and is not written into the unit: use ${instead}`);
}

export async function install(ctx: Ctx, options: { print?: boolean; force?: boolean; port?: string }): Promise<void> {
  const port = integer(options.port, '--port', 0);
  const text = unitText({
    dataDir: dataDirOf(ctx.options),
    ...(port !== undefined ? { port } : {}),
    ...(ctx.options.settings ? { settings: ctx.options.settings } : {}),
  });
  const path = join(unitDir(), UNIT);
  if (options.print) return ctx.out.result({ path, unit: text, written: false }, () => process.stdout.write(text));
  if (existsSync(path) && !options.force)
    throw new CliError(`${path} exists; --force replaces it (or --print shows the new one)`, EXIT.failed);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o644 });
  const notes = leftOut();
  ctx.out.result({ path, unit: text, written: true, leftOut: notes }, () => {
    ctx.out.line(`wrote ${path}`);
    for (const note of notes) ctx.out.note(ctx.out.yellow(note));
    ctx.out.line(
      ctx.out.dim('start it now and at login: systemctl --user daemon-reload && systemctl --user enable --now agtd'),
    );
    ctx.out.line(ctx.out.dim('keep it running after logout: loginctl enable-linger $USER'));
  });
}

export async function uninstall(ctx: Ctx): Promise<number | void> {
  const path = join(unitDir(), UNIT);
  const existed = existsSync(path);
  rmSync(path, { force: true });
  ctx.out.result({ path, removed: existed }, () =>
    ctx.out.line(existed ? `deleted ${path} (systemctl --user daemon-reload to forget it)` : `there was no ${path}`),
  );
  return existed ? undefined : EXIT.failed;
}
