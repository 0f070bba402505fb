/** What the extension host uses of the kernel: the services it hands to extensions, nothing more. */
import type { FastifyBaseLogger } from 'fastify';
import type {
  AgentsService,
  InboxService,
  AgentLauncher,
  LocalRequests,
  RequestAuth,
  RuntimeGaugesAccess,
} from '@agt/contracts';
import type { Contributions } from './contributions.js';
import type { KernelBus } from '../events/bus.js';
import type { SettingsStore } from '../settings.js';
import type { IdentityService } from '../identity/types.js';

export interface ExtensionHostDeps {
  logger: FastifyBaseLogger;
  bus: KernelBus;
  settings: SettingsStore;
  /** `ctx.agents` for the extension named `origin`: its `log` rows carry that origin. */
  agentsFor(origin: string): AgentsService;
  inbox: InboxService;
  launcher: AgentLauncher;
  contributions: Contributions;
  /** `ctx.gauges` (absent in a host without a kernel's live state). */
  gauges?: RuntimeGaugesAccess;
  /** `ctx.requests` (absent in a host without an HTTP API of its own). */
  requests?: LocalRequests;
  /** The runtime key's DID and a signer of raw bytes (the kernel's); `ctx.daemonIdentity` prefixes them per extension. */
  runtimeKey?: { did: string; sign(bytes: Uint8Array): Uint8Array };
  /** `ctx.auth`: the daemon token checked for extensions' own servers (absent in a host without an HTTP API). */
  auth?: RequestAuth;
  /** Opens `ctx.secrets` (runtime and owner keys); absent in a host without an identity. */
  identity?: IdentityService;
  /** Where `ctx.print` writes (the daemon's listening-line output; default stdout). */
  print?: (line: string) => void;
}
