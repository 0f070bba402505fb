/**
 * Every environment variable the kernel reads, parsed in one place (docs/environment.md). Variables of an
 * extension (the mesh extension's `MESH_HOST`, `MESH_PORT`) are that extension's, read through `ctx.env`.
 */
import { StartupError } from './errors.js';

export interface DaemonEnv {
  host: string;
  port: number;
  allowedHosts: string[];
  token: string | undefined;
  behindProxy: boolean;
  settingsPath: string | undefined;
  userDataDir: string | undefined;
  extensionsManifest: string | undefined;
  logLevel: string;
  /** `pretty` (pino-pretty, for a person) or `json` (one JSON object a line); unset: pretty on a TTY. */
  logFormat: 'pretty' | 'json' | undefined;
  ownerPassphrase: string | undefined;
  ownerPassphraseFile: string | undefined;
  shutdownAgentTimeoutMs: number;
  /** log2 of the scrypt cost N of passphrase files this daemon writes; undefined: the production cost. */
  kdfLog2N: number | undefined;
}

export const ENV_HELP: Array<[string, string]> = [
  ['AGT_DAEMON_HOST', 'listen address (default 127.0.0.1); non-loopback needs AGT_DAEMON_TOKEN'],
  ['AGT_DAEMON_PORT', 'listen port (default 7385; 0 picks a free port)'],
  ['AGT_DAEMON_ALLOWED_HOSTS', 'comma-separated host names clients may use in the Host header'],
  ['AGT_DAEMON_TOKEN', 'bearer token; overrides the daemon-token file'],
  ['AGT_DAEMON_BEHIND_PROXY', '1 when behind a same-host reverse proxy (local routes need X-AGT-Local-Proof)'],
  ['AGT_DAEMON_SETTINGS', 'settings file path; its folder is the data directory'],
  ['AGT_USER_DATA_DIR', 'data directory when AGT_DAEMON_SETTINGS is unset'],
  ['AGT_EXTENSIONS', 'extension manifest replacing the default extensions.json'],
  ['AGT_LOG_LEVEL', 'fatal, error, warn, info (default), debug, trace or silent'],
  ['AGT_LOG_FORMAT', 'pretty or json (default: pretty when stderr is a terminal, else json)'],
  ['AGT_OWNER_PASSPHRASE', 'unlocks the owner identity at start'],
  ['AGT_OWNER_PASSPHRASE_FILE', 'file holding the passphrase that unlocks the owner identity'],
  ['AGT_SHUTDOWN_TIMEOUT_MS', 'per-agent unload deadline at shutdown (default 10000)'],
  [
    'AGT_KDF_COST',
    'scrypt cost of passphrase files written from now on, as log2 N: 10-20 (default 17); lower only on slow hardware',
  ],
];

function port(name: string, raw: string | undefined, fallback: number | undefined): number | undefined {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new StartupError(`${name} must be a port number 0-65535, got "${raw}"`);
  }
  return value;
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function readEnv(env: NodeJS.ProcessEnv = process.env): DaemonEnv {
  const logLevel = env.AGT_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new StartupError(`AGT_LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}`);
  const logFormat = env.AGT_LOG_FORMAT || undefined;
  if (logFormat !== undefined && logFormat !== 'pretty' && logFormat !== 'json')
    throw new StartupError(`AGT_LOG_FORMAT must be pretty or json, got "${logFormat}"`);
  const timeoutRaw = env.AGT_SHUTDOWN_TIMEOUT_MS;
  const shutdownAgentTimeoutMs = timeoutRaw ? Number(timeoutRaw) : 10_000;
  if (!Number.isInteger(shutdownAgentTimeoutMs) || shutdownAgentTimeoutMs < 0) {
    throw new StartupError(`AGT_SHUTDOWN_TIMEOUT_MS must be a non-negative integer, got "${timeoutRaw}"`);
  }
  const kdfRaw = env.AGT_KDF_COST;
  const kdfLog2N = kdfRaw ? Number(kdfRaw) : undefined;
  // The bounds a file's own parameters are held to (identity/kdf.ts): 2^10 to 2^20.
  if (kdfLog2N !== undefined && !(Number.isInteger(kdfLog2N) && kdfLog2N >= 10 && kdfLog2N <= 20)) {
    throw new StartupError(`AGT_KDF_COST must be an integer 10-20 (log2 of scrypt's N), got "${kdfRaw}"`);
  }
  return {
    host: env.AGT_DAEMON_HOST || '127.0.0.1',
    port: port('AGT_DAEMON_PORT', env.AGT_DAEMON_PORT, 7385)!,
    allowedHosts: (env.AGT_DAEMON_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    token: env.AGT_DAEMON_TOKEN || undefined,
    behindProxy: env.AGT_DAEMON_BEHIND_PROXY === '1' || env.AGT_DAEMON_BEHIND_PROXY === 'true',
    settingsPath: env.AGT_DAEMON_SETTINGS || undefined,
    userDataDir: env.AGT_USER_DATA_DIR || undefined,
    extensionsManifest: env.AGT_EXTENSIONS || undefined,
    logLevel,
    logFormat,
    ownerPassphrase: env.AGT_OWNER_PASSPHRASE || undefined,
    ownerPassphraseFile: env.AGT_OWNER_PASSPHRASE_FILE || undefined,
    shutdownAgentTimeoutMs,
    kdfLog2N,
  };
}
