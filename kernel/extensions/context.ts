/**
 * Builds the one object an extension reaches the kernel through. Services are handed out as narrow
 * views: the bus stamps `source: ext:<name>`, bus and settings subscriptions are remembered so the
 * kernel can release them when the extension fails or stops, and `agents`/`inbox` are read from the
 * kernel at call time because the agents module may replace those services after this context exists.
 */
import type { EventBus } from '../../contracts/events.js';
import type { ExtensionContext, ExtensionHttp } from '../../contracts/extension.js';
import type { Logger } from '../../contracts/logger.js';
import type { AgentsService, InboxService, SettingsService } from '../../contracts/services.js';
import type { Kernel } from '../kernel.js';

/** A view of `read()` that looks each member up when it is used (or called), never when the view is made. */
export function lateBound<T extends object>(read: () => T): T {
  return new Proxy({} as T, {
    get(_target, property) {
      const value = Reflect.get(read(), property) as unknown;
      if (typeof value !== 'function') return value;
      // Looked up again at call time, so even a destructured method follows a replaced service.
      return (...args: unknown[]) => {
        const service = read();
        return (Reflect.get(service, property) as (...a: unknown[]) => unknown).apply(service, args);
      };
    },
    has: (_target, property) => Reflect.has(read(), property),
    ownKeys: () => Reflect.ownKeys(read()),
    getOwnPropertyDescriptor: (_target, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(read(), property);
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
  });
}

export interface BuiltContext {
  context: ExtensionContext;
  /** Ends every subscription the extension made through this context; safe to call more than once. */
  release(): void;
}

export interface ContextInput {
  name: string;
  config: unknown;
  http: ExtensionHttp;
  agentHttp?: ExtensionHttp;
}

export function buildContext(kernel: Kernel, input: ContextInput): BuiltContext {
  const { name } = input;
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
  };

  const context: ExtensionContext = {
    name,
    config: input.config,
    logger: kernel.logger.child({ extension: name }) as Logger,
    http: input.http,
    ...(input.agentHttp ? { agentHttp: input.agentHttp } : {}),
    bus,
    settings,
    agents: lateBound<AgentsService>(() => kernel.agents),
    inbox: lateBound<InboxService>(() => kernel.inbox),
    contribute: kernel.contributions.forExtension(name),
  };
  return {
    context,
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
