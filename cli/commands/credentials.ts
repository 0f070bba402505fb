/**
 * `agt credentials …`: a value is read from stdin or a hidden prompt, never from an argument (it would
 * sit in the shell history and the process list), and never printed: the daemon answers metadata only.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { readStdin } from './args.js';

export interface CredentialMeta {
  name: string;
  set: boolean;
  sealed: boolean;
  locked: boolean;
  length: number;
  updated_at: number | null;
}

/** `GET /agents/{id}/credentials`. */
export interface CredentialList {
  agentId: string;
  locked: boolean;
  reason: string | null;
  passwordProtected: boolean;
  credentials: CredentialMeta[];
}

/**
 * A secret from stdin (one trailing newline dropped: `echo` and here-strings add it), or asked hidden on a terminal.
 */
async function secret(what: string): Promise<string> {
  let value: string;
  if (process.stdin.isTTY) {
    const { password } = await import('@inquirer/prompts');
    value = await password({ message: what, mask: '*' });
  } else {
    value = (await readStdin()).toString('utf8').replace(/\r?\n$/, '');
  }
  if (!value)
    throw new CliError(`${what}: nothing was given (pipe it to stdin, or run on a terminal to be asked)`, EXIT.usage);
  return value;
}

export async function list(ctx: Ctx, agent: string): Promise<void> {
  const answer = await ctx.client.get<CredentialList>(`/agents/${seg(agent)}/credentials`);
  ctx.out.result(answer, () => {
    const { out } = ctx;
    out.line(
      `envelope ${answer.locked ? out.yellow(`locked (${answer.reason})`) : out.green('unlocked')}${answer.passwordProtected ? ', password-protected' : ''}`,
    );
    if (answer.credentials.length === 0)
      return out.line(out.dim('no credentials (agt credentials set <agent> <name> < file)'));
    out.table(
      ['NAME', 'SET', 'SEALED', 'LENGTH', 'UPDATED'],
      answer.credentials.map((c) => [
        out.bold(c.name),
        c.set ? 'yes' : 'no',
        c.sealed ? 'yes' : out.yellow('pending'),
        String(c.length),
        c.updated_at ? new Date(c.updated_at).toISOString().slice(0, 19).replace('T', ' ') : '-',
      ]),
    );
  });
}

export async function set(ctx: Ctx, agent: string, name: string, options: { replace?: boolean }): Promise<void> {
  const value = await secret(`value of ${name}`);
  const answer = await ctx.client.request('PUT', `/agents/${seg(agent)}/credentials/${seg(name)}`, {
    value,
    ...(options.replace ? { replace: true } : {}),
  });
  ctx.out.result(answer, () =>
    ctx.out.line(
      `set ${name} (${answer.credential.length} characters${answer.credential.sealed ? ', sealed' : ', pending until the envelope unlocks'})`,
    ),
  );
}

export async function remove(ctx: Ctx, agent: string, name: string): Promise<number | void> {
  const answer = await ctx.client.request('DELETE', `/agents/${seg(agent)}/credentials/${seg(name)}`);
  ctx.out.result(answer, () => ctx.out.line(answer.success ? `deleted ${name}` : `there was no ${name}`));
  return answer.success ? undefined : EXIT.failed;
}

export async function unlock(ctx: Ctx, agent: string): Promise<void> {
  const password = await secret(`password of ${agent}`);
  const answer = await ctx.client.post(`/agents/${seg(agent)}/credentials/unlock`, { password });
  ctx.out.result(answer, () =>
    ctx.out.line(answer.locked ? `still locked (${answer.reason})` : `unlocked the credentials of ${agent}`),
  );
}

export async function lock(ctx: Ctx, agent: string): Promise<void> {
  const answer = await ctx.client.post(`/agents/${seg(agent)}/credentials/lock`);
  ctx.out.result(answer, () => ctx.out.line(`locked the credentials of ${agent}`));
}
