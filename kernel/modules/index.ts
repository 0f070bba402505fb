/** The kernel modules, in registration order. Each adds its routes and fills its kernel service slot. */
import type { KernelModule } from '../kernel.js';
import { agentIdentityModule } from './agent-identity.js';
import { agentsModule } from './agents.js';
import { autostartModule } from './autostart.js';
import { chatModule } from './chat.js';
import { controlModule } from './control.js';
import { createAgentModule } from './create-agent.js';
import { credentialsModule } from './credentials.js';
import { eventsModule } from './events.js';
import { healthModule } from './health.js';
import { identityModule } from './identity.js';
import { loopsModule } from './loops.js';
import { loopsWriteModule } from './loops-write.js';
import { contextModule } from './context.js';
import { compactModule } from './compact.js';
import { notImplementedModule } from './not-implemented.js';
import { startAgentModule } from './start-agent.js';
import { runtimeModule } from './runtime.js';
import { settingsModule } from './settings.js';
import { tasksModule } from './tasks.js';
import { templatesModule } from './templates.js';
import { timersModule } from './timers.js';

export const KERNEL_MODULES: KernelModule[] = [healthModule, settingsModule, eventsModule, identityModule, agentsModule, credentialsModule, agentIdentityModule, createAgentModule, chatModule, controlModule, timersModule, tasksModule, templatesModule, runtimeModule,
  loopsModule,
  loopsWriteModule,
  contextModule,
  compactModule,
  startAgentModule,
  autostartModule,
  // Last: answers 501 for spec routes no module above registered.
  notImplementedModule,
];
