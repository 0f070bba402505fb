/**
 * The throwaway copy an eval case runs on (docs/evals.md, "The copy"): a consistent snapshot of the live
 * agent's file (VACUUM INTO, as backups take it), emptied of what belongs to the original's life rather
 * than its behaviour. It keeps the config, files, tables and memories; it loses its conversation (each case
 * brings its own), queued turns, requests to the owner, timers, inbox and outbox, and its key pair: a copy
 * can never sign as the agent. Its only trigger is `on_chat`, so nothing but the case's input wakes it,
 * and a variant's model or instructions replace the original's here.
 */
import { copyFileSync, rmSync } from 'node:fs';
import type { AgentConfig } from '@agt/contracts';
import { libsql } from '../agents/libsql.js';
import { runSqliteJob } from '../storage/sqlite-job.js';
import type { EvalCase } from './suite.js';

/** What a variant changes in the copy's config. */
export interface VariantChange {
  /** `provider/model`: the provider id and the model id. */
  model?: string;
  instructions?: string;
}

const LIFE_TABLES = [
  'agt_loop',
  'agt_queue',
  'agt_tasks',
  'agt_prompts',
  'agt_timers',
  'agt_inbox',
  'agt_outbox',
  'agt_idempotency',
  'agt_identity',
  'agt_lease',
];

const AGENT_NAME_MAX = 64;

/** The copy's config: the original's with the variant applied, woken only by chat, never started on its own. */
export function copyConfig(config: AgentConfig, change: VariantChange, label: string): AgentConfig {
  const suffix = ` (eval ${label})`;
  const next: AgentConfig = {
    ...config,
    name: `${config.name.slice(0, AGENT_NAME_MAX - suffix.length)}${suffix}`,
    autostart: false,
    state: 'active',
    triggers: config.triggers.on_chat ? { on_chat: config.triggers.on_chat } : {},
  };
  delete next.handle;
  delete (next as { adapters?: unknown }).adapters;
  delete (next as { serving?: unknown }).serving;
  delete (next as { ws_connections?: unknown }).ws_connections;
  if (change.instructions !== undefined) next.instructions = change.instructions;
  if (change.model) {
    const slash = change.model.indexOf('/');
    next.model = { ...config.model, provider: change.model.slice(0, slash), model_id: change.model.slice(slash + 1) };
  }
  return next;
}

/** The config stored in an agent file that is not loaded (an eval of a file), read only. */
export function storedConfig(path: string): AgentConfig {
  const db = new (libsql())(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT value FROM agt_config WHERE key = ?').get('config') as { value: string } | undefined;
    if (!row) throw new Error('no config');
    return JSON.parse(row.value) as AgentConfig;
  } finally {
    db.close();
  }
}

/** Writes the variant's base copy of the live file at `path` (prepared once; each case copies it). */
export async function writeBase(liveFile: string, path: string, configOf: (live: AgentConfig) => AgentConfig) {
  await runSqliteJob({ op: 'copy', src: liveFile, dst: path });
  const config = configOf(storedConfig(path));
  const db = new (libsql())(path);
  try {
    db.transaction(() => {
      for (const table of LIFE_TABLES) db.exec(`DELETE FROM ${table}`);
      db.prepare('UPDATE agt_config SET value = ? WHERE key = ?').run(JSON.stringify(config), 'config');
    })();
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** One case's copy of the base, with the conversation the case brings. */
export function writeCaseCopy(base: string, path: string, testCase: EvalCase): void {
  copyFileSync(base, path);
  if (!testCase.history?.length) return;
  const db = new (libsql())(path);
  try {
    const insert = db.prepare(
      "INSERT INTO agt_loop (loop, role, kind, content, created_at) VALUES ('main', ?, 'message', ?, ?)",
    );
    const at = Date.now() - testCase.history.length;
    db.transaction(() => {
      testCase.history!.forEach((message, i) => {
        insert.run(message.role, JSON.stringify({ text: message.text }), at + i);
      });
    })();
  } finally {
    db.close();
  }
}

export function removeCopy(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}
