/**
 * `agt tools <agent> [ls]` and `agt tools <agent> enable|disable|restrict|unrestrict <name>`: one tool
 * at a time through `PUT /agents/{id}/tools/{name}`, so the agent's other tools stay as they are.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

export interface ToolRow {
  name: string;
  enabled: boolean;
  restricted: boolean;
  locked: boolean;
  source: string;
  disabledReason?: string;
}

const CHANGES: Record<string, { enabled?: boolean; restricted?: boolean; said: string }> = {
  enable: { enabled: true, said: 'enabled' },
  disable: { enabled: false, said: 'disabled' },
  restrict: { restricted: true, said: 'restricted (each call waits for your approval)' },
  unrestrict: { restricted: false, said: 'unrestricted' },
};

export async function list(ctx: Ctx, agent: string): Promise<void> {
  const { tools } = await ctx.client.get<{ tools: ToolRow[] }>(`/agents/${seg(agent)}/tools`);
  ctx.out.result(tools, () =>
    ctx.out.table(
      ['TOOL', 'ENABLED', 'RESTRICTED', 'SOURCE'],
      tools.map((tool) => [
        tool.name,
        tool.enabled ? 'yes' : tool.disabledReason ? `no (${tool.disabledReason})` : 'no',
        tool.restricted ? 'yes' : 'no',
        tool.source,
      ]),
    ),
  );
}

/** `action` is ls (or list), enable, disable, restrict or unrestrict; `name` the tool for all but ls. */
export async function tools(
  ctx: Ctx,
  agent: string,
  action: string | undefined,
  name: string | undefined,
): Promise<void> {
  if (action === undefined || action === 'ls' || action === 'list') {
    if (name !== undefined) throw new CliError(`agt tools ${agent} ls takes no tool name`, EXIT.usage);
    return list(ctx, agent);
  }
  const change = CHANGES[action];
  if (!change)
    throw new CliError(`unknown action "${action}": ls, enable, disable, restrict or unrestrict`, EXIT.usage);
  if (!name) throw new CliError(`agt tools ${agent} ${action} needs a tool name`, EXIT.usage);
  const body: Record<string, boolean> = {};
  if (change.enabled !== undefined) body.enabled = change.enabled;
  if (change.restricted !== undefined) body.restricted = change.restricted;
  const answer = await ctx.client.request<{ agentId: string; tool: ToolRow }>(
    'PUT',
    `/agents/${seg(agent)}/tools/${seg(name)}`,
    body,
  );
  ctx.out.result(answer, () => ctx.out.line(`${name} of ${agent}: ${change.said}`));
}
