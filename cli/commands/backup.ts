/** `agt backup`, `agt restore`, `agt export --format af`, `agt import FILE.af` (docs/backups.md). */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

/** Absolute, keeping a trailing `/`: it says the path is a folder (the daemon's rule, docs/backups.md). */
const place = (path: string) => `${resolve(path)}${path.endsWith('/') && resolve(path) !== '/' ? '/' : ''}`;

const human = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;

export async function backup(ctx: Ctx, agent: string, options: { to?: string; seal?: boolean }): Promise<void> {
  // Paths are made absolute here: the daemon resolves nothing relative to its own folder.
  const body = { ...(options.to ? { path: place(options.to) } : {}), ...(options.seal ? { seal: true } : {}) };
  const done = await ctx.client.post(`/agents/${seg(agent)}/backup`, body);
  ctx.out.result(done, () => {
    ctx.out.line(`backed up ${agent} to ${ctx.out.bold(done.path)}${done.sealed ? ' (sealed to the owner)' : ''}`);
    ctx.out.line(ctx.out.dim(`${human(done.bytes)}, schema ${done.schemaVersion}, sha256 ${done.sha256}`));
  });
}

export async function restore(
  ctx: Ctx,
  file: string,
  options: { to?: string; asNew?: boolean; start?: boolean; name?: string },
): Promise<void> {
  if (options.name !== undefined && !options.asNew)
    throw new CliError('--name renames a copy: it takes --as-new', EXIT.usage);
  const body = {
    from: resolve(file),
    ...(options.to ? { to: place(options.to) } : {}),
    ...(options.asNew ? { asNew: true } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.start ? { start: true } : {}),
  };
  const done = await ctx.client.post('/agents/restore', body);
  ctx.out.result(done, () => {
    ctx.out.line(
      `restored ${ctx.out.bold(done.name)} (${done.agentId})${done.asNew ? ' as a new agent' : ''}${done.started ? ', started' : ''}`,
    );
    ctx.out.line(ctx.out.dim(`file ${done.filePath}${done.did ? `, identity ${done.did}` : ''}`));
  });
}

export async function exportAgent(
  ctx: Ctx,
  agent: string,
  options: { format: string; output?: string },
): Promise<void> {
  if (options.format !== 'af')
    throw new CliError(`--format ${options.format} is not known (af: Letta Agent File)`, EXIT.usage);
  const document = await ctx.client.get(`/agents/${seg(agent)}/export?format=af`);
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (!options.output) {
    process.stdout.write(text);
    return;
  }
  writeFileSync(resolve(options.output), text, { mode: 0o600 });
  ctx.out.result({ path: resolve(options.output), bytes: Buffer.byteLength(text) }, () =>
    ctx.out.line(`exported ${agent} to ${resolve(options.output!)}`),
  );
}

export async function importAgent(
  ctx: Ctx,
  file: string,
  options: { dir?: string; start?: boolean; name?: string },
): Promise<void> {
  const body = {
    from: resolve(file),
    format: 'af',
    ...(options.dir ? { directory: resolve(options.dir) } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.start ? { start: true } : {}),
  };
  const done = await ctx.client.post('/agents/import', body);
  ctx.out.result(done, () => {
    ctx.out.line(`imported ${ctx.out.bold(done.name)} (${done.agentId})${done.started ? ', started' : ''}`);
    ctx.out.line(
      ctx.out.dim(
        `${done.imported.blocks} memory blocks (${done.imported.memories} pinned memories), ${done.imported.messages} messages; tools ${done.imported.tools.join(', ') || 'none'}`,
      ),
    );
    if (done.imported.toolsNotMapped.length > 0)
      ctx.out.line(ctx.out.dim(`not mapped (Letta tools do not run here): ${done.imported.toolsNotMapped.join(', ')}`));
    ctx.out.line(ctx.out.dim(`file ${done.filePath}`));
  });
}

interface BackupFileRow {
  path: string;
  name: string;
  agentId: string;
  bytes: number;
  modifiedAt: string;
  sealed: boolean;
}

/** `agt backups`: the backup files in the backups folder, newest first. */
export async function listBackups(ctx: Ctx): Promise<void> {
  const listed = await ctx.client.get<{ dir: string; files: BackupFileRow[] }>('/backups/files');
  ctx.out.result(listed, () => {
    if (listed.files.length === 0) return ctx.out.line(ctx.out.dim(`no backups in ${listed.dir}`));
    ctx.out.table(
      ['AGENT', 'TIME', 'SIZE', 'SEALED', 'FILE'],
      listed.files.map((file) => [
        file.agentId,
        file.modifiedAt,
        human(file.bytes),
        file.sealed ? 'yes' : 'no',
        file.path,
      ]),
    );
  });
}

/** `agt backups run`: the scheduled backup now; prints the run once it ends. */
export async function runBackups(ctx: Ctx): Promise<void> {
  const run = await ctx.client.post('/backups/run', {});
  ctx.out.result(run, () =>
    ctx.out.line(
      `backed up ${run.completed} agent file(s)${run.failed ? `, ${ctx.out.red(`${run.failed} failed`)}` : ''}`,
    ),
  );
}
