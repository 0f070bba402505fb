/**
 * What a connected server tells agt besides its answers, and what agt tells it once connected (docs/mcp.md
 * "Subscriptions, logging and roots"):
 *
 * - `notifications/resources/updated` of a URI the agent's declaration lists in `subscribe` fires the
 *   agent's `on_mcp_resource` trigger with `{server, uri}`. The subscriptions (`resources/subscribe`) are
 *   made after every connect, when the server offers them; an update of a URI not subscribed to is ignored
 *   (a server cannot start the agent's turns for what the agent did not ask about).
 * - `notifications/message` (the server's log) goes to the agent's log when at least the registration's
 *   `logLevel` (default `warning`), at most {@link LOG_PER_MINUTE} a minute per server (the rest are
 *   counted and said once); a server that declares logging is told the level (`logging/setLevel`).
 * - `resources/list_changed` and `prompts/list_changed` are noted: the agent's `resources_*` and
 *   `prompts_*` tools ask the server at each call, so the next call sees the change.
 * - `roots/list` answers the agent's work folder as the one root when the registration has
 *   `exposeWorkFolder`; without it the client declares no roots capability and has none to list.
 *
 * On the 2026-07-28 revision there is no session for the server to write to unasked: the subscriptions
 * and the `list_changed` notifications come on one `subscriptions/listen` stream opened after connecting,
 * to the same handlers, and there is no `logging/setLevel`: each request names the level instead
 * (server-connection.ts), and the server's log comes inside its answer.
 */
import type { Client, LoggingLevel } from '@modelcontextprotocol/client';
import { type LogLevel, type McpLogLevel, McpLogLevels } from '@agt/contracts';
import type { LogRing } from './log-ring.js';

/** Server log messages written to the agent's log per server and minute, at most. */
export const LOG_PER_MINUTE = 30;
const MAX_LOG_TEXT = 2000;

/** What the connection needs of its agent for these (agent-servers.ts gives it). */
export interface NotificationHooks {
  /** The resource URIs the declaration subscribes to, read at each connect. */
  subscriptions(): string[];
  /** A subscribed resource changed: fire `on_mcp_resource`. Must not throw. */
  resourceUpdated(uri: string): void;
  /** The least severe server log message kept (the registration's `logLevel`). */
  logLevel(): McpLogLevel;
  /** A row in the agent's log. Must not throw. */
  serverLog(level: LogLevel, message: string): void;
  /** The `file://` URI of the agent's work folder when the registration exposes it; undefined: no roots. */
  root(): Promise<string | undefined>;
}

/** The agent's log level of an MCP one. */
function agentLevel(level: LoggingLevel): LogLevel {
  if (level === 'debug') return 'debug';
  if (level === 'info' || level === 'notice') return 'info';
  if (level === 'warning') return 'warn';
  return 'error';
}

const severity = (level: string) => McpLogLevels.indexOf(level as McpLogLevel);

/** Sets the client's handlers for what the server sends on its own. */
export function listenTo(
  client: Client,
  server: string,
  hooks: NotificationHooks,
  logs: LogRing,
  root: string | undefined,
): { subscribed: Set<string> } {
  const subscribed = new Set<string>();
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    const uri = notification.params.uri;
    if (!subscribed.has(uri)) return;
    logs.note(`resource updated: ${uri.slice(0, 300)}`);
    hooks.resourceUpdated(uri);
  });
  client.setNotificationHandler('notifications/resources/list_changed', () => logs.note('resource list changed'));
  client.setNotificationHandler('notifications/prompts/list_changed', () => logs.note('prompt list changed'));
  const window = { start: 0, written: 0, dropped: 0 };
  client.setNotificationHandler('notifications/message', (notification) => {
    const { level, logger, data } = notification.params;
    if (severity(level) < severity(hooks.logLevel())) return;
    const now = Date.now();
    if (now - window.start >= 60_000) {
      if (window.dropped > 0)
        hooks.serverLog(
          'warn',
          `MCP server ${server}: ${window.dropped} log message(s) left out (over ${LOG_PER_MINUTE} a minute)`,
        );
      Object.assign(window, { start: now, written: 0, dropped: 0 });
    }
    if (window.written >= LOG_PER_MINUTE) {
      window.dropped++;
      return;
    }
    window.written++;
    const body = typeof data === 'string' ? data : JSON.stringify(data ?? null);
    const text = logs.scrub(`${logger ? `${logger}: ` : ''}${body}`).slice(0, MAX_LOG_TEXT);
    hooks.serverLog(agentLevel(level), `MCP server ${server} [${level}] ${text}`);
  });
  if (root) client.setRequestHandler('roots/list', () => ({ roots: [{ uri: root, name: 'work folder' }] }));
  return { subscribed };
}

/**
 * Once connected: the log level, then the subscriptions (each failure noted, never failing the connection).
 * `subscribed` is filled before each request goes out, so an update sent right after the answer is taken.
 */
export async function afterConnect(
  client: Client,
  hooks: NotificationHooks,
  logs: LogRing,
  subscribed: Set<string>,
  timeout: number,
): Promise<void> {
  const capabilities = client.getServerCapabilities();
  if (client.getProtocolEra() === 'modern') return listenModern(client, hooks, logs, subscribed, timeout);
  if (capabilities?.logging) {
    const level = hooks.logLevel();
    await client
      .setLoggingLevel(level, { timeout })
      .then(() => logs.note(`log level set to ${level}`))
      .catch((error: Error) => logs.note(`could not set the log level: ${logs.scrub(error.message).slice(0, 200)}`));
  }
  const wanted = [...new Set(hooks.subscriptions())];
  if (wanted.length === 0) return;
  if (!capabilities?.resources?.subscribe) {
    logs.note(`the server offers no resource subscriptions: ${wanted.length} not made`);
    return;
  }
  for (const uri of wanted) {
    subscribed.add(uri);
    try {
      await client.subscribeResource({ uri }, { timeout });
      logs.note(`subscribed to ${uri.slice(0, 300)}`);
    } catch (error) {
      subscribed.delete(uri);
      logs.note(`could not subscribe to ${uri.slice(0, 300)}: ${logs.scrub((error as Error).message).slice(0, 200)}`);
    }
  }
}

/** The 2026-07-28 revision's one stream of what the server sends unasked: list changes, subscriptions. */
async function listenModern(
  client: Client,
  hooks: NotificationHooks,
  logs: LogRing,
  subscribed: Set<string>,
  timeout: number,
): Promise<void> {
  const capabilities = client.getServerCapabilities();
  const wanted = [...new Set(hooks.subscriptions())];
  if (wanted.length > 0 && !capabilities?.resources?.subscribe) {
    logs.note(`the server offers no resource subscriptions: ${wanted.length} not made`);
    wanted.length = 0;
  }
  const filter = {
    ...(capabilities?.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(capabilities?.resources?.listChanged ? { resourcesListChanged: true } : {}),
    ...(capabilities?.prompts?.listChanged ? { promptsListChanged: true } : {}),
    ...(wanted.length ? { resourceSubscriptions: wanted } : {}),
  };
  if (Object.keys(filter).length === 0) return;
  for (const uri of wanted) subscribed.add(uri);
  try {
    const subscription = await client.listen(filter, { timeout });
    const honored = new Set(subscription.honoredFilter.resourceSubscriptions ?? []);
    for (const uri of wanted) {
      if (honored.has(uri)) logs.note(`subscribed to ${uri.slice(0, 300)}`);
      else {
        subscribed.delete(uri);
        logs.note(`could not subscribe to ${uri.slice(0, 300)}: the server did not take it`);
      }
    }
  } catch (error) {
    for (const uri of wanted) subscribed.delete(uri);
    logs.note(`could not listen for notifications: ${logs.scrub((error as Error).message).slice(0, 200)}`);
  }
}
