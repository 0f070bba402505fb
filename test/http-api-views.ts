/**
 * The view types HTTP clients of the daemon declare for themselves (the console's web UI, the `agt`
 * command) against the route schemas they read (`kernel/http-api/agents-api.ts`). The schemas are the
 * kernel's, not part of `@agt/contracts`, so each client names what it reads; this file makes the type
 * check (`npm run typecheck`, CI's tsc) fail when a route's answer no longer gives what a view reads: a
 * field removed, renamed or given another type. Not a test file: tsc is what checks it.
 */
import type { Static, TSchema } from 'typebox';
import type { AgentRow as CliAgentRow } from '../cli/commands/status.js';
import type { PendingTask as CliPendingTask } from '../cli/commands/tasks.js';
import type { AgentStatusView, AgentSummaryView, DaemonUsageView, PendingTaskView, UsageRollupView } from '../extensions/console/ui/api-types.js';
import type { AgentStatus, AgentSummary, DaemonUsage, PendingTask, UsageRollup } from '../kernel/http-api/agents-api.js';

/** `true` only when every answer of `Route` is a `View` (the view reads nothing the route does not give). */
type Gives<Route extends TSchema, View> = [Static<Route>] extends [View] ? true : false;
/** Also refuses a view that declares a field the route never has (a typo would otherwise pass as optional). */
type NoStrayKeys<Route extends TSchema, View> = Exclude<keyof View, keyof Static<Route>> extends never ? true : false;

export const viewsAgree: {
  summary: [Gives<typeof AgentSummary, AgentSummaryView>, NoStrayKeys<typeof AgentSummary, AgentSummaryView>];
  status: [Gives<typeof AgentStatus, AgentStatusView>, NoStrayKeys<typeof AgentStatus, AgentStatusView>];
  usage: [Gives<typeof DaemonUsage, DaemonUsageView>, NoStrayKeys<typeof DaemonUsage, DaemonUsageView>];
  rollup: [Gives<typeof UsageRollup, UsageRollupView>, NoStrayKeys<typeof UsageRollup, UsageRollupView>];
  consoleTask: [Gives<typeof PendingTask, PendingTaskView>, NoStrayKeys<typeof PendingTask, PendingTaskView>];
  cliTask: [Gives<typeof PendingTask, CliPendingTask>, NoStrayKeys<typeof PendingTask, CliPendingTask>];
  cliAgent: [Gives<typeof AgentSummary, CliAgentRow>, NoStrayKeys<typeof AgentSummary, CliAgentRow>];
} = { summary: [true, true], status: [true, true], usage: [true, true], rollup: [true, true], consoleTask: [true, true], cliTask: [true, true], cliAgent: [true, true] };
