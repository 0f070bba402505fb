/**
 * `agt mcp review <server>`: the tool definitions of a server that changed since the owner approved them
 * (`GET /mcp/servers/{name}/review`, docs/mcp.md "Pinned tool definitions"), each as a diff of its
 * description and input schema, then the approval (`POST …/review`): asked on a terminal, at once with
 * `--yes`. A changed tool stays disabled for every agent until approved.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { EXIT } from '../errors.js';

interface Definition {
  description: string;
  inputSchema: unknown;
}
interface Change {
  tool: string;
  changed: Array<'description' | 'inputSchema'>;
  before: Definition;
  after: Definition;
  seenAt: number;
}

/** Lines of `before` and `after` as a plain diff: the common start and end once, the middle as -/+. */
export function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return [
    ...a.slice(0, start).map((l) => `  ${l}`),
    ...a.slice(start, a.length - end).map((l) => `- ${l}`),
    ...b.slice(start, b.length - end).map((l) => `+ ${l}`),
    ...a.slice(a.length - end).map((l) => `  ${l}`),
  ];
}

export async function review(
  ctx: Ctx,
  server: string,
  options: { yes?: boolean; tool?: string[] },
): Promise<number | void> {
  const { client, out } = ctx;
  const path = `/mcp/servers/${seg(server)}/review`;
  const listed = await client.get<{ server: string; changes: Change[] }>(path);
  const changes = options.tool ? listed.changes.filter((c) => options.tool!.includes(c.tool)) : listed.changes;
  if (changes.length === 0) {
    out.result(listed, () => out.line(`no changed tool definition of ${server} waits for review`));
    return;
  }
  if (!out.json) {
    for (const change of changes) {
      out.line(out.bold(`${change.tool}: ${change.changed.join(' and ')} changed`));
      const paint = (line: string) =>
        line.startsWith('- ') ? out.red(line) : line.startsWith('+ ') ? out.green(line) : out.dim(line);
      if (change.changed.includes('description'))
        for (const line of lineDiff(change.before.description, change.after.description)) out.line(paint(line));
      if (change.changed.includes('inputSchema'))
        for (const line of lineDiff(
          JSON.stringify(change.before.inputSchema, null, 2),
          JSON.stringify(change.after.inputSchema, null, 2),
        ))
          out.line(paint(line));
    }
  }
  let approve = options.yes === true;
  if (!approve && process.stdin.isTTY && !out.json) {
    const { confirm } = await import('@inquirer/prompts');
    approve = await confirm({ message: `Approve these definitions for every agent using ${server}?`, default: false });
  }
  if (!approve) {
    out.result({ ...listed, changes }, () =>
      out.line(out.dim(`not approved: the tools stay disabled (agt mcp review ${server} --yes approves)`)),
    );
    return out.json ? undefined : EXIT.failed;
  }
  const tools = changes.map((c) => c.tool);
  const answer = await client.post<{ server: string; approved: string[] }>(path, { tools });
  out.result(answer, () => out.line(out.green(`approved ${answer.approved.join(', ')} of ${server}`)));
}
