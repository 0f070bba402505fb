/** PLACEHOLDER: the extension loader (being written). */
import type { KernelApp } from '../http/app.js';
import type { Kernel } from '../kernel.js';

export interface ExtensionHost {
  /** Calls every loaded extension's `start` in dependency order; a throw fails that extension only. */
  startAll(): Promise<void>;
  /** Calls `stop` in reverse order, each at most once, within `deadlineMs` overall. */
  stopAll(deadlineMs: number): Promise<void>;
}

export async function loadExtensions(_app: KernelApp, _kernel: Kernel, _manifestPath: string): Promise<ExtensionHost> {
  return { startAll: async () => {}, stopAll: async () => {} };
}
