/** `agt_config`: the agent config (key `config`, JSON) and other small file-level values by key. */
import type { AgentConfig } from '@agt/contracts';
import { parseJson, type Sql } from '../sql.js';

export const CONFIG_KEY = 'config';

export class ConfigStore {
  constructor(private readonly sql: Sql) {}

  /** The stored config as written (not validated here: the registry validates at load). */
  get(): AgentConfig | undefined {
    const value = this.getValue(CONFIG_KEY);
    return value === undefined ? undefined : (value as AgentConfig);
  }

  /** Replaces the stored config. Callers validate first. */
  put(config: AgentConfig, now = Date.now()): void {
    this.setValue(CONFIG_KEY, config, now);
  }

  /** Any JSON value stored under `key`, or undefined. */
  getValue(key: string): unknown {
    const row = this.sql.one<{ value: string }>('SELECT value FROM agt_config WHERE key = ?', key);
    return row === undefined ? undefined : parseJson(row.value);
  }

  /** Stores a JSON value under `key` (insert or replace). */
  setValue(key: string, value: unknown, now = Date.now()): void {
    this.sql.run(
      'INSERT INTO agt_config (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      key,
      JSON.stringify(value),
      now,
    );
  }

  /** Removes a key; true when something was removed. */
  deleteValue(key: string): boolean {
    return this.sql.run('DELETE FROM agt_config WHERE key = ?', key).changes > 0;
  }
}
