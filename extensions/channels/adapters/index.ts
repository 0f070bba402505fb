/**
 * The adapter types shipped with the extension: one import and one entry per type. Third-party types
 * are added at run time through the `channels.adapter-types` point (see `../adapter.ts`).
 */
import type { AdapterType } from '../adapter.js';
import { emailAdapterType } from './email.js';
import { discordAdapter } from './discord.js';
import { slackAdapter } from './slack.js';
import { telegramAdapter } from './telegram.js';

export const BUILTIN_ADAPTER_TYPES: readonly AdapterType[] = [
  emailAdapterType,
  telegramAdapter,
  slackAdapter,
  discordAdapter,
];
