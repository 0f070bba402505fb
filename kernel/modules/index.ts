/** The kernel modules, in registration order. Each adds its routes and fills its kernel service slot. */
import type { KernelModule } from '../kernel.js';
import { healthModule } from './health.js';

export const KERNEL_MODULES: KernelModule[] = [healthModule];
