/**
 * Installs the runtime into the kernel once (the first runtime module to register does it): the
 * service becomes `kernel.runtime` (the registry's hooks) and the built-in tools fill
 * `kernel.builtinTools`. Route modules reach the service through {@link runtimeOf}.
 */
import type { Kernel } from '../kernel.js';
import { RuntimeService } from './runtime.js';
import { builtinTools } from './tools/index.js';

const installed = new WeakMap<Kernel, RuntimeService>();

export function runtimeOf(kernel: Kernel): RuntimeService {
  let service = installed.get(kernel);
  if (!service) {
    const created = new RuntimeService(kernel);
    service = created;
    installed.set(kernel, created);
    kernel.runtime = created;
    kernel.builtinTools = builtinTools((agentId) => created.byId(agentId));
  }
  return service;
}
