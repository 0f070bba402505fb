/**
 * The console's API client: same-origin fetch with the session cookie and the `X-Agt-Console` header
 * (never the daemon token, which the page does not keep). Response types come from `@agt/contracts`
 * where the daemon's schemas live there, so a changed schema breaks `npm run typecheck:console`.
 */
import type { AgentStatus, AgentSummary } from '@agt/contracts/agents-api';
import type { EventFrame, UmbilicalEvent } from '@agt/contracts/events';

export type { AgentSummary, EventFrame, UmbilicalEvent };

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { 'x-agt-console': '1', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data?.code ?? 'error', data?.error ?? `${res.status} ${res.statusText}`);
  return data as T;
}

const seg = encodeURIComponent;

export interface PendingItem {
  kind: 'approval' | 'budget' | 'ask' | 'suspend';
  id: string;
  agentId: string;
  agentName: string;
  loop: string;
  turnId: string | null;
  createdAt: number;
  tool?: string;
  args?: Record<string, unknown>;
  question?: string;
  reason?: string;
}
export interface ExtensionInfo {
  name: string;
  state?: string;
  enabled: boolean;
  loaded: boolean;
  error?: string | null;
  prefix?: string | null;
  version?: string;
  [key: string]: unknown;
}
export interface ChatHistory {
  llmMessages: Array<{ role: string; content: unknown }> | null;
  total: number | null;
  earlierCount: number | null;
}
export interface SessionInfo {
  id: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  via: 'code' | 'token';
  userAgent: string | null;
  current: boolean;
}

export const client = {
  loginWithCode: (code: string) => api<{ session: SessionInfo }>('POST', '/console/login', { code }),
  loginWithToken: (token: string) => api<{ session: SessionInfo }>('POST', '/console/sessions', undefined, { authorization: `Bearer ${token}` }),
  sessions: () => api<{ sessions: SessionInfo[] }>('GET', '/console/sessions'),
  revoke: (id: string) => api<{ success: boolean }>('DELETE', `/console/sessions/${seg(id)}`),
  logout: () => api<{ success: boolean }>('POST', '/console/logout'),
  agents: () => api<AgentSummary[]>('GET', '/agents'),
  status: (id: string) => api<AgentStatus>('GET', `/agents/${seg(id)}/status`),
  create: (name: string, template?: string) => api<{ agentId: string; name: string }>('POST', '/agents/create', { name, ...(template ? { template } : {}) }),
  start: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/start`),
  stop: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/stop`),
  interrupt: (id: string) => api<unknown>('POST', `/agents/${seg(id)}/interrupt`),
  chat: (id: string, text: string) => api<{ accepted: true; turnId: string }>('POST', `/agents/${seg(id)}/chat`, { text }),
  history: (id: string, limit = 50) => api<ChatHistory>('GET', `/agents/${seg(id)}/chat?limit=${limit}`),
  usage: (id: string) => api<Record<string, unknown>>('GET', `/agents/${seg(id)}/usage`),
  tasks: () => api<{ tasks: PendingItem[] }>('GET', '/tasks'),
  resolve: (item: PendingItem, action: 'approve' | 'deny') => api<unknown>('POST', `/agents/${seg(item.agentId)}/tasks/${seg(item.id)}/resolve`, { action }),
  answer: (item: PendingItem, answer: string) => api<unknown>('POST', `/agents/${seg(item.agentId)}/asks/${seg(item.id)}/respond`, { answer }),
  suspend: (item: PendingItem, resume: boolean) => api<unknown>('POST', `/agents/${seg(item.agentId)}/suspend/respond`, { resume, loop: item.loop }),
  extensions: () => api<{ extensions: ExtensionInfo[] }>('GET', '/runtime/extensions'),
  extensionIndex: (prefix: string) => api<unknown>('GET', prefix),
  health: () => api<Record<string, unknown>>('GET', '/health'),
};
