/**
 * The view types HTTP clients of the daemon declare for themselves (the console's web UI, the `agt`
 * command) against the route schemas they read (the kernel's `kernel/http-api/agents-api.ts` and route
 * files, the extensions' `schemas.ts`). The schemas are not part of `@agt/contracts`, so each client names
 * what it reads; this file makes the type check (`npm run typecheck`, CI's tsc) fail when a route's answer
 * no longer gives what a view reads: a field removed, renamed or given another type. Every answer type the
 * `agt` command declares is here. Not a test file: tsc is what checks it.
 */
import type { Static, TSchema } from 'typebox';
import type { AgentRow as CliAgentRow } from '../cli/commands/status.js';
import type { PendingTask as CliPendingTask } from '../cli/commands/tasks.js';
import type { CredentialList } from '../cli/commands/credentials.js';
import type { AgentUsage, UsageReport } from '../cli/commands/spend.js';
import type { AgentAdapters, ChannelsOverview } from '../cli/commands/adapters.js';
import type { ExtensionRow as CliExtensionRow } from '../cli/commands/extensions.js';
import type { AgentServers, McpOverview, PackageList as CliPackageList } from '../cli/commands/mcp.js';
import type { AgentLogs } from '../cli/commands/observe.js';
import type { FolderList as CliFolderList } from '../cli/commands/operate.js';
import type { ToolRow } from '../cli/commands/tools.js';
import type { LoopPage as CliLoopPage, TrackedAgent as CliTrackedAgent } from '../cli/commands/agents.js';
import type { ProviderEntry } from '../cli/commands/providers.js';
import type { MemoryChangelogView, MemoryListing, SavedMemory } from '../cli/commands/memory.js';
import type {
  AgentStatusView,
  AgentSummaryView,
  DaemonUsageView,
  EvalRunListView,
  EvalRunView as ConsoleEvalRunView,
  FleetDaemonsView,
  FleetStatusView,
  MemoryListView,
  MemoryOneView,
  PendingTaskView,
  UsageRollupView,
} from '../extensions/console/ui/api-types.js';
import type {
  AgentStatus,
  AgentSummary,
  DaemonUsage,
  PendingTask,
  ToolEntry,
  UsageRollup,
} from '../kernel/http-api/agents-api.js';
import type { ListReply as CredentialListReply } from '../kernel/routes/credentials.js';
import type { LogsReply } from '../kernel/routes/agent-logs.js';
import type { ExtensionRow } from '../kernel/routes/runtime-extensions.js';
import type { LoopPage } from '../kernel/routes/loops.js';
import type { MemoryChangelog, MemoryList, MemoryOne } from '../kernel/routes/agent-memory.js';
import type { EvalRun, EvalRunList } from '../kernel/routes/evals.js';
import type { EvalRunView } from '../cli/commands/evals.js';
import type { AgentAdapters as AgentAdaptersReply, ChannelsList } from '../extensions/channels/schemas.js';
import type { AgentServerList, Overview as McpOverviewReply, PackageList } from '../extensions/mcp/schemas.js';
import type { FolderList, TrackedAgent } from '../extensions/tracked-folders/schemas.js';
import type { DaemonList } from '../extensions/fleet/daemon-list.js';
import type { FleetStatus } from '../extensions/fleet/routes.js';
import type { AppProviderSettings } from '@agt/contracts';

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
  cliCredentials: [
    Gives<typeof CredentialListReply, CredentialList>,
    NoStrayKeys<typeof CredentialListReply, CredentialList>,
  ];
  cliAgentUsage: [Gives<typeof UsageRollup, AgentUsage>, NoStrayKeys<typeof UsageRollup, AgentUsage>];
  cliUsage: [Gives<typeof DaemonUsage, UsageReport>, NoStrayKeys<typeof DaemonUsage, UsageReport>];
  cliAdapters: [Gives<typeof AgentAdaptersReply, AgentAdapters>, NoStrayKeys<typeof AgentAdaptersReply, AgentAdapters>];
  cliChannels: [Gives<typeof ChannelsList, ChannelsOverview>, NoStrayKeys<typeof ChannelsList, ChannelsOverview>];
  cliExtension: [Gives<typeof ExtensionRow, CliExtensionRow>, NoStrayKeys<typeof ExtensionRow, CliExtensionRow>];
  cliAgentMcp: [Gives<typeof AgentServerList, AgentServers>, NoStrayKeys<typeof AgentServerList, AgentServers>];
  cliMcp: [Gives<typeof McpOverviewReply, McpOverview>, NoStrayKeys<typeof McpOverviewReply, McpOverview>];
  cliMcpPackages: [Gives<typeof PackageList, CliPackageList>, NoStrayKeys<typeof PackageList, CliPackageList>];
  cliLogs: [Gives<typeof LogsReply, AgentLogs>, NoStrayKeys<typeof LogsReply, AgentLogs>];
  cliFolders: [Gives<typeof FolderList, CliFolderList>, NoStrayKeys<typeof FolderList, CliFolderList>];
  cliTrackedAgent: [Gives<typeof TrackedAgent, CliTrackedAgent>, NoStrayKeys<typeof TrackedAgent, CliTrackedAgent>];
  cliTool: [Gives<typeof ToolEntry, ToolRow>, NoStrayKeys<typeof ToolEntry, ToolRow>];
  cliLoop: [Gives<typeof LoopPage, CliLoopPage>, NoStrayKeys<typeof LoopPage, CliLoopPage>];
  cliProvider: [
    Gives<typeof AppProviderSettings, ProviderEntry>,
    NoStrayKeys<typeof AppProviderSettings, ProviderEntry>,
  ];
  cliMemory: [Gives<typeof MemoryList, MemoryListing>, NoStrayKeys<typeof MemoryList, MemoryListing>];
  cliSavedMemory: [Gives<typeof MemoryOne, SavedMemory>, NoStrayKeys<typeof MemoryOne, SavedMemory>];
  cliMemoryChangelog: [
    Gives<typeof MemoryChangelog, MemoryChangelogView>,
    NoStrayKeys<typeof MemoryChangelog, MemoryChangelogView>,
  ];
  consoleMemory: [Gives<typeof MemoryList, MemoryListView>, NoStrayKeys<typeof MemoryList, MemoryListView>];
  consoleMemoryOne: [Gives<typeof MemoryOne, MemoryOneView>, NoStrayKeys<typeof MemoryOne, MemoryOneView>];
  cliEvalRun: [Gives<typeof EvalRun, EvalRunView>, NoStrayKeys<typeof EvalRun, EvalRunView>];
  consoleEvalRun: [Gives<typeof EvalRun, ConsoleEvalRunView>, NoStrayKeys<typeof EvalRun, ConsoleEvalRunView>];
  consoleEvalRuns: [Gives<typeof EvalRunList, EvalRunListView>, NoStrayKeys<typeof EvalRunList, EvalRunListView>];
  consoleFleet: [Gives<typeof FleetStatus, FleetStatusView>, NoStrayKeys<typeof FleetStatus, FleetStatusView>];
  consoleFleetDaemons: [Gives<typeof DaemonList, FleetDaemonsView>, NoStrayKeys<typeof DaemonList, FleetDaemonsView>];
} = {
  summary: [true, true],
  status: [true, true],
  usage: [true, true],
  rollup: [true, true],
  consoleTask: [true, true],
  cliTask: [true, true],
  cliAgent: [true, true],
  cliCredentials: [true, true],
  cliAgentUsage: [true, true],
  cliUsage: [true, true],
  cliAdapters: [true, true],
  cliChannels: [true, true],
  cliExtension: [true, true],
  cliAgentMcp: [true, true],
  cliMcp: [true, true],
  cliMcpPackages: [true, true],
  cliLogs: [true, true],
  cliFolders: [true, true],
  cliTrackedAgent: [true, true],
  cliTool: [true, true],
  cliLoop: [true, true],
  cliProvider: [true, true],
  cliMemory: [true, true],
  cliSavedMemory: [true, true],
  cliMemoryChangelog: [true, true],
  consoleMemory: [true, true],
  consoleMemoryOne: [true, true],
  cliEvalRun: [true, true],
  consoleEvalRun: [true, true],
  consoleEvalRuns: [true, true],
  consoleFleet: [true, true],
  consoleFleetDaemons: [true, true],
};
