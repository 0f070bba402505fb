/**
 * Where the daemon is and which token it takes, found the way the daemon finds its data directory:
 * `--settings`/`AGT_DAEMON_SETTINGS` (its folder), else `AGT_USER_DATA_DIR`, else
 * `$XDG_CONFIG_HOME/agt`, else `~/.config/agt`. The URL: `--url`, else `AGT_DAEMON_URL`, else the
 * `daemon-url` file a running daemon writes in its data directory when that directory was named
 * by its settings file (`--settings`, `AGT_DAEMON_SETTINGS`: the file names one daemon, where a port left
 * in the shell from another daemon would not), else `AGT_DAEMON_HOST`/`AGT_DAEMON_PORT` when set, else that
 * `daemon-url` file, else http://127.0.0.1:7385. The token: `--token`, else `AGT_DAEMON_TOKEN`, else
 * the data directory's `daemon-token` file.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface ConnectionOptions {
  url?: string;
  token?: string;
  settings?: string;
}

export interface Connection {
  url: string;
  token: string | undefined;
  dataDir: string;
  /** Where the URL and the token came from, for error messages. */
  urlSource: string;
  tokenSource: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:7385';

export function dataDirOf(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): string {
  const settings = options.settings ?? (env.AGT_DAEMON_SETTINGS || undefined);
  if (settings) return dirname(resolve(settings));
  if (env.AGT_USER_DATA_DIR) return resolve(env.AGT_USER_DATA_DIR);
  return join(env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), '.config'), 'agt');
}

function readTrimmed(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    return text || undefined;
  } catch {
    return undefined;
  }
}

/** A listen address as a client reaches it: the wildcard addresses mean this machine. */
function hostForClient(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export function resolveConnection(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  const dataDir = dataDirOf(options, env);
  const named = Boolean(options.settings || env.AGT_DAEMON_SETTINGS);
  const published = readTrimmed(join(dataDir, 'daemon-url'));
  let url: string;
  let urlSource: string;
  if (options.url) [url, urlSource] = [options.url, '--url'];
  else if (env.AGT_DAEMON_URL) [url, urlSource] = [env.AGT_DAEMON_URL, 'AGT_DAEMON_URL'];
  else if (named && published) [url, urlSource] = [published, join(dataDir, 'daemon-url')];
  else if (env.AGT_DAEMON_HOST || env.AGT_DAEMON_PORT) {
    url = `http://${hostForClient(env.AGT_DAEMON_HOST || '127.0.0.1')}:${env.AGT_DAEMON_PORT || '7385'}`;
    urlSource = 'AGT_DAEMON_HOST/AGT_DAEMON_PORT';
  } else {
    [url, urlSource] = published ? [published, join(dataDir, 'daemon-url')] : [DEFAULT_URL, 'the default address'];
  }
  let token: string | undefined;
  let tokenSource: string;
  if (options.token) [token, tokenSource] = [options.token, '--token'];
  else if (env.AGT_DAEMON_TOKEN) [token, tokenSource] = [env.AGT_DAEMON_TOKEN, 'AGT_DAEMON_TOKEN'];
  else [token, tokenSource] = [readTrimmed(join(dataDir, 'daemon-token')), join(dataDir, 'daemon-token')];
  return { url: url.replace(/\/+$/, ''), token, dataDir, urlSource, tokenSource };
}
