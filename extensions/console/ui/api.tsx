/**
 * The console's API client: same-origin fetch with the session cookie and the `X-Agt-Console` header
 * (never the daemon token, which the page does not keep). The answers of the daemon's own routes are typed
 * by the console's view types (`api-types.ts`), checked against the route schemas by `npm run typecheck`.
 */
import type { AppProviderSettings } from '@agt/contracts';
import { signal } from '@preact/signals';
import type { EventFrame, UmbilicalEvent } from '@agt/contracts';
import type {
  AgentStatusView,
  AgentSummaryView,
  DaemonUsageView,
  EvalRunListView,
  EvalRunView,
  FleetDaemonsView,
  FleetStatusView,
  MemoryItemView,
  MemoryListView,
  MemoryOneView,
  PendingTaskView,
  UsageRollupView,
} from './api-types.js';

export type { EventFrame, UmbilicalEvent };
export type AgentSummary = AgentSummaryView;
export type AgentStatus = AgentStatusView;
export type DaemonUsage = DaemonUsageView;
export type UsageRollup = UsageRollupView;
export type MemoryItem = MemoryItemView;
export type MemoryList = MemoryListView;
export type EvalRun = EvalRunView;
export type EvalRunSummary = EvalRunListView['runs'][number];
export type FleetDaemons = FleetDaemonsView;
export type FleetDaemon = FleetDaemonsView['daemons'][number];

/** Set when the daemon answers 401 to a console request: the session ended (revoked or expired). */
export const sessionEnded = signal(false);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const init: RequestInit = {
    method,
    credentials: 'same-origin',
    headers: {
      'x-agt-console': '1',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.status === 401 && !path.startsWith('/console/login') && !path.startsWith('/console/sessions'))
    sessionEnded.value = true;
  if (!res.ok) throw new ApiError(res.status, data?.code ?? 'error', data?.error ?? `${res.status} ${res.statusText}`);
  return data as T;
}

const seg = encodeURIComponent;
const forAgent = (agent?: string) => (agent ? `?agent=${seg(agent)}` : '');

/** An item of `GET /tasks`. */
export type PendingItem = PendingTaskView;
export interface ExtensionInfo {
  name: string;
  state?: string;
  enabled: boolean;
  loaded: boolean;
  error?: string | null;
  /** What the running extension cannot do now (a port in use, an engine not reachable), or null. */
  problem?: string | null;
  prefix?: string | null;
  version?: string;
  [key: string]: unknown;
}
/** A file of `GET /backups/files`. */
export interface BackupFileInfo {
  path: string;
  name: string;
  agentId: string;
  bytes: number;
  modifiedAt: string;
  sealed: boolean;
}
/** An open MCP server of a loaded agent, as `GET /mcp` lists it. */
export interface McpServerInfo {
  agentId: string;
  name: string;
  transport?: string;
  status: string;
  toolCount?: number;
  error?: string;
}
/** One row of the conversation as a model message (`GET /agents/{id}/chat`). */
export interface ChatMessage {
  id: number;
  role: string;
  kind: string;
  content: string;
  createdAt: number;
  turnId: string | null;
  toolCalls?: Array<{ id: string; name: string; args: unknown }>;
  toolCallId?: string;
  name?: string;
  isError?: boolean;
}
/** Null for an agent with no conversation yet. */
export type ChatHistory = { llmMessages: ChatMessage[]; total: number; earlierCount: number } | null;
export interface SessionInfo {
  id: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  via: 'code' | 'token';
  userAgent: string | null;
  current: boolean;
}

/** A row of `GET /agents/{id}/loop` (the durable conversation). */
export interface LoopRow {
  id: number;
  role: string;
  kind: string;
  content: unknown;
  created_at: number;
  usage_input: number | null;
  usage_output: number | null;
  cost: number | null;
}
export interface LogEntry {
  id: number;
  level: 'debug' | 'info' | 'warn' | 'error';
  origin: string | null;
  event: string | null;
  target: string | null;
  message: string;
  data: string | null;
  created_at: number;
}
/** An item of `GET /agents/{id}/loops`: main or an inner loop, its declaration and live state. */
export interface LoopInfo {
  name: string;
  goal: string | null;
  enabled: boolean;
  autostart?: boolean;
  entryCount: number;
  effectiveTools: string[] | null;
  state: string;
  running: boolean;
}
/** An item of `GET /agents/{id}/timers`. */
export interface TimerInfo {
  id: number;
  schedule: {
    mode: string;
    at?: number;
    delay_ms?: number;
    every_ms?: number;
    cron?: string;
    max_runs?: number;
    end_at?: number;
  };
  next_wake_at: number | null;
  payload: string | null;
  run_count: number;
  last_fired_at: number | null;
  expired: boolean;
  loop: string | null;
}
export interface FileInfo {
  path: string;
  size: number;
  mime_type: string | null;
  updated_at: number;
}
export interface TrackedAgent {
  filePath: string;
  id: string;
  name: string;
  loaded: boolean;
  reviewed: boolean;
}

export const client = {
  loginWithCode: (code: string) => api<{ session: SessionInfo }>('POST', '/console/login', { code }),
  loginWithToken: (token: string) =>
    api<{ session: SessionInfo }>('POST', '/console/sessions', undefined, { authorization: `Bearer ${token}` }),
  sessions: () => api<{ sessions: SessionInfo[] }>('GET', '/console/sessions'),
  revoke: (id: string) => api<{ success: boolean }>('DELETE', `/console/sessions/${seg(id)}`),
  logout: () => api<{ success: boolean }>('POST', '/console/logout'),
  agents: () => api<AgentSummary[]>('GET', '/agents'),
  status: (id: string) => api<AgentStatus>('GET', `/agents/${seg(id)}/status`),
  create: (body: { name: string; template?: string; provider?: string; model?: string; start?: boolean }) =>
    api<{ agentId: string; name: string }>('POST', '/agents/create', body),
  start: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/start`),
  stop: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/stop`),
  interrupt: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/interrupt`),
  chat: (id: string, text: string) =>
    api<{ accepted: true; turnId: string }>('POST', `/agents/${seg(id)}/chat`, { text }),
  history: (id: string, limit = 50) => api<ChatHistory>('GET', `/agents/${seg(id)}/chat?limit=${limit}`),
  usage: (id: string) => api<Record<string, unknown>>('GET', `/agents/${seg(id)}/usage`),
  /** This month's spend of the loaded agents, grouped by day or by model. */
  usageMonth: (groupBy: 'day' | 'model') => api<DaemonUsage>('GET', `/usage?groupBy=${groupBy}`),
  usageToday: () =>
    api<DaemonUsage>('GET', `/usage?groupBy=agent&from=${new Date(new Date().setHours(0, 0, 0, 0)).toISOString()}`),
  rollup: (id: string) => api<UsageRollup>('GET', `/agents/${seg(id)}/usage`),
  tracked: () => api<{ agents: TrackedAgent[] }>('GET', '/tracked-folders/agents'),
  loopPage: (id: string, offset?: number) =>
    api<{ total: number; offset: number; rows: LoopRow[] }>(
      'GET',
      `/agents/${seg(id)}/loop?limit=50${offset === undefined ? '' : `&offset=${offset}`}`,
    ),
  loops: (id: string) => api<{ loops: LoopInfo[] }>('GET', `/agents/${seg(id)}/loops`),
  addLoop: (id: string, body: { name: string; goal: string; enabled: boolean; autostart: boolean }) =>
    api<unknown>('POST', `/agents/${seg(id)}/loops`, body),
  patchLoop: (id: string, name: string, patch: { goal?: string; enabled?: boolean }) =>
    api<unknown>('PATCH', `/agents/${seg(id)}/loops/${seg(name)}`, patch),
  deleteLoop: (id: string, name: string) => api<unknown>('DELETE', `/agents/${seg(id)}/loops/${seg(name)}`),
  timers: (id: string) => api<{ timers: TimerInfo[] }>('GET', `/agents/${seg(id)}/timers`),
  addTimer: (id: string, body: Record<string, unknown>) => api<unknown>('POST', `/agents/${seg(id)}/timers`, body),
  /** Replaces a timer in place (same id; its run count starts over). */
  replaceTimer: async (id: string, timerId: number, body: Record<string, unknown>) => {
    const { success } = await api<{ success: boolean }>('PUT', `/agents/${seg(id)}/timers/${timerId}`, body);
    if (!success) throw new Error(`timer ${timerId} is gone`);
  },
  deleteTimer: (id: string, timerId: number) => api<unknown>('DELETE', `/agents/${seg(id)}/timers/${timerId}`),
  logs: (id: string) => api<{ logs: LogEntry[] }>('GET', `/agents/${seg(id)}/logs?limit=200`),
  credentials: (id: string) =>
    api<{
      credentials: Array<{ name: string; set: boolean; locked: boolean; length: number; updated_at: number | null }>;
    }>('GET', `/agents/${seg(id)}/credentials`),
  setCredential: (id: string, name: string, value: string) =>
    api<unknown>('PUT', `/agents/${seg(id)}/credentials/${seg(name)}`, { value }),
  unsetCredential: (id: string, name: string) => api<unknown>('DELETE', `/agents/${seg(id)}/credentials/${seg(name)}`),
  backup: (id: string, seal: boolean) =>
    api<{ path: string; bytes: number; sha256: string; sealed: boolean }>('POST', `/agents/${seg(id)}/backup`, {
      seal,
    }),
  restore: (body: { from: string; asNew?: boolean; start?: boolean }) =>
    api<{ agentId: string; name: string; filePath: string }>('POST', '/agents/restore', body),
  backupSchedule: () =>
    api<{
      enabled: boolean;
      every: string | null;
      keep: number | null;
      dir: string | null;
      sealed: boolean;
      nextRunAt: string | null;
      running: boolean;
      lastRun: { startedAt: string; finishedAt: string | null; completed: number; failed: number } | null;
      problem: string | null;
    }>('GET', '/backups'),
  /** `GET /backups/files`: the copies in the backups folder, newest first. */
  backupFiles: () => api<{ dir: string; files: BackupFileInfo[] }>('GET', '/backups/files'),
  /** `POST /backups/run`: the scheduled backup now; answers once it ends. */
  runBackups: () => api<{ completed: number; failed: number }>('POST', '/backups/run', {}),
  files: (id: string) => api<{ files: FileInfo[] }>('GET', `/agents/${seg(id)}/files`),
  file: (id: string, path: string, encoding: 'utf-8' | 'base64') =>
    api<{ content: string; encoding: string; mime_type: string | null }>(
      'GET',
      `/agents/${seg(id)}/files/content?path=${seg(path)}&encoding=${encoding}`,
    ),
  putFile: (id: string, path: string, content: string) =>
    api<unknown>('PUT', `/agents/${seg(id)}/files/content?path=${seg(path)}`, { content, encoding: 'base64' }),
  config: (id: string) => api<{ config: Record<string, unknown> }>('GET', `/agents/${seg(id)}/config`),
  putConfig: (id: string, config: unknown) => api<unknown>('PUT', `/agents/${seg(id)}/config`, config),
  identity: () => api<Record<string, unknown> & { status: string }>('GET', '/identity'),
  unlockIdentity: (passphrase: string) => api<unknown>('POST', '/identity/unlock', { passphrase }),
  providers: () => api<unknown>('GET', '/providers'),
  /** Adds an app provider: settings' `providers` list with one more (PATCH replaces the array). */
  addProvider: async (provider: AppProviderSettings) => {
    const settings = await api<{ providers?: AppProviderSettings[] }>('GET', '/settings');
    return api<unknown>('PATCH', '/settings', { providers: [...(settings.providers ?? []), provider] });
  },
  providerModels: (providerId: string) => api<unknown>('GET', `/providers/${seg(providerId)}/models`),
  checkProvider: (providerId: string) => api<unknown>('POST', `/providers/${seg(providerId)}/check`),
  templates: () => api<{ templates: Array<{ id: string; name?: string }> }>('GET', '/templates'),
  tasks: () => api<{ tasks: PendingItem[] }>('GET', '/tasks'),
  resolve: (item: PendingItem, action: 'approve' | 'deny') =>
    api<unknown>('POST', `/agents/${seg(item.agentId)}/tasks/${seg(item.id)}/resolve`, { action }),
  /** A budget task approved with `amount`: today's limit of that budget raised by it (docs/costs.md). */
  raise: (item: PendingItem, amount: number) =>
    api<unknown>('POST', `/agents/${seg(item.agentId)}/tasks/${seg(item.id)}/resolve`, { action: 'approve', amount }),
  /** Approves the call and lifts the tool's restriction for that agent (`PUT /agents/{id}/tools/{name}`). */
  alwaysAllow: async (item: PendingItem) => {
    await api<unknown>('PUT', `/agents/${seg(item.agentId)}/tools/${seg(item.tool ?? '')}`, { restricted: false });
    return api<unknown>('POST', `/agents/${seg(item.agentId)}/tasks/${seg(item.id)}/resolve`, { action: 'approve' });
  },
  answer: (item: PendingItem, answer: string) =>
    api<unknown>('POST', `/agents/${seg(item.agentId)}/asks/${seg(item.id)}/respond`, { answer }),
  suspend: (item: PendingItem, resume: boolean) =>
    api<unknown>('POST', `/agents/${seg(item.agentId)}/suspend/respond`, { resume, loop: item.loop }),
  extensions: () => api<{ extensions: ExtensionInfo[] }>('GET', '/runtime/extensions'),
  extensionIndex: (prefix: string) => api<unknown>('GET', prefix),
  /** `PATCH /runtime/extensions/{name}`: off at once, on at the next start (`restartRequired`). */
  setExtensionEnabled: (name: string, enabled: boolean) =>
    api<ExtensionInfo & { restartRequired: boolean }>('PATCH', `/runtime/extensions/${seg(name)}`, { enabled }),
  extensionConfig: (name: string) =>
    api<{
      name: string;
      config: Record<string, unknown>;
      effective: unknown;
      schema: unknown;
      reconfigurable: boolean;
    }>('GET', `/runtime/extensions/${seg(name)}/config`),
  patchExtensionConfig: (name: string, patch: Record<string, unknown>) =>
    api<{ applied: boolean; restartRequired: boolean }>('PATCH', `/runtime/extensions/${seg(name)}/config`, patch),
  /** `GET /mcp` (the mcp extension): registrations and the open servers of loaded agents. */
  mcp: () =>
    api<{ registrations: Array<Record<string, unknown> & { name: string; type: string }>; servers: McpServerInfo[] }>(
      'GET',
      '/mcp',
    ),
  /**
   * The owner's OAuth sign-in to a registration with `oauth` (docs/mcp.md "OAuth sign-in"); with `agent`, that
   * agent's own sign-in to a registration whose sign-in is per agent ("Per-agent sign-in").
   */
  mcpSignIn: (name: string, agent?: string) =>
    api<{ server: string; authorizationUrl?: string; expiresAt?: number }>(
      'POST',
      `/mcp/servers/${seg(name)}/login${forAgent(agent)}`,
    ),
  mcpSignInState: (name: string, agent?: string) =>
    api<{
      server: string;
      signedIn: boolean;
      scopeNeeded?: string;
      expiresAt?: number;
      scope?: string;
      pending: boolean;
      error?: string;
    }>('GET', `/mcp/servers/${seg(name)}/login${forAgent(agent)}`),
  mcpSignOut: (name: string, agent?: string) =>
    api<{ server: string; signedOut: boolean }>('DELETE', `/mcp/servers/${seg(name)}/login${forAgent(agent)}`),
  /** `GET /agents/{id}/mcp`: the agent's MCP servers with their state and why. */
  agentMcp: (id: string) =>
    api<{
      servers: Array<{
        name: string;
        transport: string;
        status: string;
        toolCount: number;
        error?: string;
        connectedAt?: number;
      }>;
    }>('GET', `/agents/${seg(id)}/mcp`),
  tools: (id: string) =>
    api<{ agentId: string; tools: Array<{ name: string; source?: string; description?: string; enabled?: boolean }> }>(
      'GET',
      `/agents/${seg(id)}/tools`,
    ),
  peers: () =>
    api<{ peers: Array<{ name: string; url: string; source: 'mdns' | 'manual'; seenAt: number | null }> }>(
      'GET',
      '/network/peers',
    ),
  /** `GET /network` (the mesh extension): the mesh server and the agents it serves. */
  network: () =>
    api<{
      mesh: { enabled: boolean; running: boolean; lan: boolean; urls: string[]; error: string | null };
      agents: Array<{ agentId: string; handle: string; visibility: string }>;
    }>('GET', '/network'),
  /** `GET /channels` (the channels extension): adapter types and each agent's adapters with their state. */
  channels: () =>
    api<{
      types: Array<{ type: string }>;
      agents: Array<{
        agentId: string;
        name: string;
        adapters: Array<{ type: string; enabled: boolean; status: string }>;
      }>;
    }>('GET', '/channels'),
  /** `GET /agents/{id}/adapters`: each adapter's state and why (its error, the last failures). */
  agentAdapters: (id: string) =>
    api<{
      adapters: Array<{
        type: string;
        error?: string;
        connectedAt?: number;
        restartCount: number;
        recentErrors: Array<{ at: number; message: string }>;
      }>;
    }>('GET', `/agents/${seg(id)}/adapters`),
  /** `GET /compute` (the compute extension): the engine, the base image, what is missing, the containers. */
  compute: () =>
    api<{
      engine: { reachable: boolean; version: string | null; host: string };
      image: { name: string; present: boolean };
      missing: string[];
      limits: { memoryMb: number; cpus: number; pids: number; defaultTimeoutMs: number; maxTimeoutMs: number };
      containers: Array<{
        id: string;
        name: string;
        tier: 'shared' | 'isolated';
        agentId: string | null;
        state: string;
        running: boolean;
        network: boolean;
      }>;
    }>('GET', '/compute'),
  outbox: (id: string) => api<unknown>('GET', `/agents/${seg(id)}/outbox`),
  /** The newest row of the durable conversation (the last page of one row): the agent's last activity. */
  lastRow: (id: string) =>
    api<{ total: number; offset: number; rows: LoopRow[] }>('GET', `/agents/${seg(id)}/loop?limit=1`),
  /**
   * The agent's memories, newest first; with `q` a search (`mode` and `note` say how it ran); `forgotten` lists the
   * forgotten ones.
   */
  memories: (id: string, query: { q?: string; forgotten?: boolean } = {}) =>
    api<MemoryList>(
      'GET',
      `/agents/${seg(id)}/memory?limit=${query.q ? `50&q=${seg(query.q)}` : '200'}${query.forgotten ? '&forgotten=true' : ''}`,
    ),
  addMemory: (id: string, body: { text: string; kind?: MemoryItem['kind']; pinned?: boolean }) =>
    api<MemoryOneView>('POST', `/agents/${seg(id)}/memory`, body),
  pinMemory: (id: string, memoryId: number, pinned: boolean) =>
    api<MemoryOneView>('PATCH', `/agents/${seg(id)}/memory/${memoryId}`, { pinned }),
  forgetMemory: (id: string, memoryId: number) => api<unknown>('DELETE', `/agents/${seg(id)}/memory/${memoryId}`),
  evalRuns: () => api<EvalRunListView>('GET', '/evals/runs'),
  evalRun: (runId: string) => api<EvalRun>('GET', `/evals/runs/${seg(runId)}`),
  cancelEvalRun: (runId: string) => api<EvalRun>('POST', `/evals/runs/${seg(runId)}/cancel`),
  /** `GET /fleet` (the fleet extension): `configured: false` when the daemon runs alone. */
  fleet: () => api<FleetStatusView>('GET', '/fleet'),
  /** `GET /fleet/daemons`: every daemon of the fleet, its heartbeat, agents, drain state and replication lag. */
  fleetDaemons: () => api<FleetDaemonsView>('GET', '/fleet/daemons'),
  /** `POST /fleet/drain`: marks `daemon` drained, then moves its agents to `to`, one at a time. */
  drain: (daemon: string, to: string[]) =>
    api<{ daemon: string; moved: unknown[]; failed: Array<{ agentId: string; error: string }> }>(
      'POST',
      '/fleet/drain',
      { daemon, to },
    ),
  undrain: (daemon: string) => api<{ daemon: string; undrained: boolean }>('POST', '/fleet/undrain', { daemon }),
  health: () => api<{ status: string; version: string; uptimeMs: number }>('GET', '/health'),
};
