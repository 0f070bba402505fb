/** The kernel modules, in registration order. Each adds its routes and fills its kernel service slot. */
import type { KernelModule } from '../kernel.js';
import { eventsModule } from './events.js';
import { healthModule } from './health.js';
import { settingsModule } from './settings.js';

export const KERNEL_MODULES: KernelModule[] = [healthModule, settingsModule, eventsModule];
