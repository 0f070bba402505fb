/**
 * A platform's server address for an adapter: the owner's setting `channels.config.types.<type>.<key>`
 * (`host.options`), never the agent's config, since it decides where the bot's token is sent; else the
 * platform's public address. Without a trailing slash.
 */
import type { AdapterHost } from '../adapter.js';

export function ownerServerUrl(host: AdapterHost, key: string, fallback: string): string {
  const value = host.options[key];
  return (typeof value === 'string' && value !== '' ? value : fallback).replace(/\/+$/, '');
}
