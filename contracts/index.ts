/** The public surface a third-party extension codes against. */
export * from './errors.js';
export * from './events.js';
export * from './extension.js';
export * from './points.js';
export * from './model.js';
export * from './tools.js';
export * from './lifecycle.js';
export * from './services.js';
export * from './settings.js';
export * from './agent-config.js';
export * from './validate.js';
export type { Logger } from './logger.js';
export * from './http.js';
export * from './server-guards.js';
export * from './agents-api.js';
export * from './agent-launcher.js';
export * from './agent-file-changes.js';
export * from './trace-context.js';
