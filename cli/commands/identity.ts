/**
 * `agt identity [status]`, `agt identity create`, `agt identity unlock`. The passphrase comes from
 * `--passphrase-file`, else a hidden prompt on a terminal (never an argument: it would sit in the shell
 * history and the process list). The seed phrase is shown once, with a warning, and never again.
 */
import { readFileSync } from 'node:fs';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

async function passphrase(
  ctx: Ctx,
  options: { passphraseFile?: string },
  confirmIt: boolean,
  needed: boolean,
): Promise<string | undefined> {
  if (options.passphraseFile) {
    const text = readFileSync(options.passphraseFile, 'utf8').replace(/\r?\n$/, '');
    if (!text) throw new CliError(`${options.passphraseFile} is empty`, EXIT.usage);
    return text;
  }
  if (!process.stdin.isTTY || ctx.out.json) {
    if (needed)
      throw new CliError(
        'a passphrase is needed: pass --passphrase-file FILE (or run on a terminal to be asked)',
        EXIT.usage,
      );
    return undefined;
  }
  const { password } = await import('@inquirer/prompts');
  const first = await password({ message: 'Passphrase', mask: '*' });
  if (!first) return needed ? passphrase(ctx, options, confirmIt, needed) : undefined;
  if (confirmIt && (await password({ message: 'Passphrase again', mask: '*' })) !== first)
    throw new CliError('the passphrases differ', EXIT.usage);
  return first;
}

/**
 * What to do next, as `agt` commands (the daemon's own `message` names HTTP routes, for API clients);
 * the daemon's message where no command exists (restoring from the seed phrase).
 */
export function identityHint(identity: {
  status: string;
  backupConfirmed?: boolean;
  message?: string;
}): string | undefined {
  switch (identity.status) {
    case 'none':
      return 'No owner identity yet: agt identity create (asks a passphrase on a terminal, or --passphrase-file FILE).';
    case 'locked':
      return 'Locked: agt identity unlock (asks the passphrase, or --passphrase-file FILE), or start agtd with AGT_OWNER_PASSPHRASE_FILE.';
    case 'ready':
      return identity.backupConfirmed === false
        ? 'Write the seed phrase down, then: agt identity confirm-backup.'
        : undefined;
    default:
      return identity.message;
  }
}

export async function identityStatus(ctx: Ctx): Promise<void> {
  const identity = await ctx.client.get('/identity');
  ctx.out.result(identity, () => {
    ctx.out.line(`${ctx.out.bold('status')}    ${identity.status}`);
    ctx.out.line(`${ctx.out.bold('owner')}     ${identity.ownerDid ?? '-'}`);
    ctx.out.line(`${ctx.out.bold('runtime')}   ${identity.runtimeDid ?? '-'}`);
    ctx.out.line(
      `${ctx.out.bold('storage')}   ${identity.storage}${identity.passphraseRequired ? ' (passphrase required)' : ''}`,
    );
    const hint = identityHint(identity);
    if (hint) ctx.out.line(ctx.out.dim(hint));
  });
}

export async function identityCreate(ctx: Ctx, options: { passphraseFile?: string }): Promise<void> {
  const before = await ctx.client.get('/identity');
  const secret = await passphrase(ctx, options, true, before.passphraseRequired === true);
  const created = await ctx.client.post('/identity/create', secret ? { passphrase: secret } : {});
  const { out } = ctx;
  if (out.json) return out.printJson(created);
  out.line(out.bold('Your seed phrase (shown this once, never again):'));
  out.line();
  out.line(`  ${out.yellow(created.seedPhrase)}`);
  out.line();
  out.line(out.red('Write it down and keep it offline. Anyone with these words owns your agents; without them a lost'));
  out.line(out.red('passphrase or machine cannot be recovered.'));
  const { confirm } = process.stdin.isTTY ? await import('@inquirer/prompts') : { confirm: undefined };
  if (confirm && (await confirm({ message: 'Have you written it down?', default: false }))) {
    await ctx.client.post('/identity/confirm-backup');
    out.line('backup confirmed');
  } else {
    out.line(out.dim('once it is written down: agt identity confirm-backup'));
  }
  out.line(`owner ${created.identity.ownerDid}`);
}

export async function identityUnlock(ctx: Ctx, options: { passphraseFile?: string }): Promise<void> {
  const secret = await passphrase(ctx, options, false, true);
  const { identity } = await ctx.client.post('/identity/unlock', { passphrase: secret });
  ctx.out.result(identity, () => ctx.out.line(`identity ${identity.status}`));
}

export async function identityConfirmBackup(ctx: Ctx): Promise<void> {
  const { identity } = await ctx.client.post('/identity/confirm-backup');
  ctx.out.result(identity, () => ctx.out.line('backup confirmed'));
}
