/**
 * Builds the one object an extension reaches the kernel through. Services are handed out as narrow
 * views: the bus stamps `source: ext:<name>`, bus and settings subscriptions are remembered so the
 * kernel can release them when the extension fails or stops.
 */
import type { EventBus } from '../../contracts/events.js';
import type { ExtensionContext, ExtensionHttp } from '../../contracts/extension.js';
import type { Logger } from '../../contracts/logger.js';
import type { SettingsService } from '../../contracts/services.js';
import type { ExtensionHostDeps } from './host-deps.js';

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

export function buildContext(kernel: ExtensionHostDeps, input: ContextInput): BuiltContext {
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
    agents: kernel.agents,
    inbox: kernel.inbox,
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
