/**
 * Builds the one object an extension reaches the kernel through. Services are handed out as narrow
 * views: the bus stamps `source: ext:<name>`, bus and settings subscriptions are remembered so the
 * kernel can release them when the extension fails or stops, the environment hides the kernel's
 * `AGT_*` variables, and extension points are offered during `register` only and used through
 * `dependsOn`.
 */
import { extensionSignedBytes } from '@agt/contracts';
import type {
  DaemonIdentity,
  EventBus,
  ExtensionContext,
  ExtensionEnv,
  ExtensionHttp,
  ExtensionPoint,
  Logger,
  SettingsService,
} from '@agt/contracts';
import type { ExtensionHostDeps } from './host-deps.js';
import { createServerGuards } from '../http/server-guards.js';
import { extensionSecrets } from './secrets.js';

export interface BuiltContext {
  context: ExtensionContext;
  /** `register` is over: from now on `provide` throws. */
  endRegister(): void;
  /** Ends every subscription the extension made through this context; safe to call more than once. */
  release(): void;
}

export interface ContextInput {
  name: string;
  config: unknown;
  /** The extensions it depends on: the only ones whose offers `use` returns. */
  dependsOn: readonly string[];
  /** The daemon's environment variables (the view hides `AGT_*`). */
  env: NodeJS.ProcessEnv;
  http: ExtensionHttp;
  agentHttp?: ExtensionHttp;
}

const defaultPrint = (line: string) => void process.stdout.write(`${line}\n`);

/** A read-only view of `source` without the kernel's own `AGT_*` variables. */
export function extensionEnv(source: NodeJS.ProcessEnv): ExtensionEnv {
  return Object.freeze({
    get: (name: string) =>
      typeof name !== 'string' || name.startsWith('AGT_') || !Object.hasOwn(source, name) ? undefined : source[name],
    names: () => Object.keys(source).filter((name) => !name.startsWith('AGT_') && source[name] !== undefined),
  });
}

/** The runtime key for one extension: its signatures cover `extensionSignedBytes(name, message)` only. */
function daemonIdentity(key: NonNullable<ExtensionHostDeps['runtimeKey']>, name: string): DaemonIdentity {
  return Object.freeze({
    did: key.did,
    sign: (message: Uint8Array) => key.sign(extensionSignedBytes(name, message)),
  });
}

export function buildContext(kernel: ExtensionHostDeps, input: ContextInput): BuiltContext {
  const { name } = input;
  const points = kernel.contributions.points;
  let registering = true;
  const subscriptions = new Set<() => void>();
  const track = (unsubscribe: () => void) => {
    const once = () => {
      if (subscriptions.delete(once)) unsubscribe();
    };
    subscriptions.add(once);
    return once;
  };

  const bus: EventBus = {
    emit: (type, emitInput) => kernel.bus.emit(type, { ...emitInput, source: emitInput.source ?? `ext:${name}` }),
    subscribe: (listener) => track(kernel.bus.subscribe(listener)),
  };
  const settings: SettingsService = {
    get dataDir() {
      return kernel.settings.dataDir;
    },
    current: () => kernel.settings.current(),
    onChange: (listener) => track(kernel.settings.onChange(listener)),
    update: (patch) => kernel.settings.update(patch),
  };

  const context: ExtensionContext = {
    name,
    config: input.config,
    logger: kernel.logger.child({ extension: name }) as Logger,
    http: input.http,
    ...(input.agentHttp ? { agentHttp: input.agentHttp } : {}),
    bus,
    settings,
    agents: kernel.agentsFor(name),
    inbox: kernel.inbox,
    launcher: kernel.launcher,
    env: extensionEnv(input.env),
    ...(kernel.gauges ? { gauges: kernel.gauges } : {}),
    ...(kernel.requests ? { requests: kernel.requests } : {}),
    ...(kernel.runtimeKey ? { daemonIdentity: daemonIdentity(kernel.runtimeKey, name) } : {}),
    ...(kernel.auth ? { auth: kernel.auth } : {}),
    ...(kernel.identity ? { secrets: extensionSecrets(kernel.settings.dataDir, name, kernel.identity) } : {}),
    print: (line: string) => (kernel.print ?? defaultPrint)(String(line).replace(/[\r\n]+/g, ' ')),
    serverGuards: createServerGuards(() => kernel.settings.current().server),
    contribute: kernel.contributions.forExtension(name),
    provide: <T>(point: ExtensionPoint<T>, implementation: T) => {
      if (!registering)
        throw new Error(
          `extension ${name} offers extension point ${point.id} after register: offer it during register`,
        );
      points.provide(name, point, implementation);
    },
    use: (<T>(point: ExtensionPoint<T>) => points.use(name, input.dependsOn, point)) as ExtensionContext['use'],
  };
  return {
    context,
    endRegister: () => {
      registering = false;
    },
    release: () => {
      for (const unsubscribe of [...subscriptions]) {
        try {
          unsubscribe();
        } catch (error) {
          kernel.logger.warn({ err: error, extension: name }, 'releasing a subscription failed');
        }
      }
    },
  };
}
