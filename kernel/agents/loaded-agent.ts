/**
 * One agent the registry holds: its open file, config and the state the daemon keeps in memory.
 *
 * Two configs: {@link fileConfig} is what the file says (what `GET`/`PUT config` read and write, what a
 * review fingerprints); {@link config} is what applies, the file's config under the owner's ceiling
 * (`ceiling.ts`), recomputed when either the file's config or the settings change. Everything that acts
 * for the agent (runtime, tools, command runner, extensions through {@link view}) reads {@link config}.
 */
import type { AgentConfig, AgentView, Settings } from '@agt/contracts';
import type { CappedField } from '../http-api/agents-api.js';
import type { AgentFile } from './agent-file.js';
import { capConfig, ceilingFor } from './ceiling.js';

const NO_SETTINGS: Readonly<Settings> = Object.freeze({});

export class LoadedAgent {
  /** The display (fleet-map) state; starts from `config.state`, moved only by the state route/tool. */
  displayState: string;
  /** `CREDENTIALS_LOCKED` while the credentials envelope is locked (set by the identity module). */
  degraded: string | null = null;
  /** Set by whoever starts the agent (start route, autostart); `stopped` hooks run at unload when true. */
  started = false;
  readonly loadedAt = Date.now();
  /**
   * Per-agent objects other modules hang on the agent (executors, trigger evaluator, ...), by owner
   * name. The registry never reads them; owners remove theirs in their detach path.
   */
  readonly attachments = new Map<string, unknown>();
  private current: AgentConfig;
  private cache:
    | { stored: AgentConfig; settings: Readonly<Settings>; config: AgentConfig; capped: CappedField[] }
    | undefined;

  constructor(
    readonly filePath: string,
    readonly file: AgentFile,
    config: AgentConfig,
    /** The owner's current settings (the ceiling); without it, the safe defaults apply. */
    private readonly settings: () => Readonly<Settings> = () => NO_SETTINGS,
  ) {
    this.current = config;
    this.displayState = config.state;
  }

  private effective() {
    const settings = this.settings();
    if (this.cache?.stored !== this.current || this.cache.settings !== settings) {
      const { config, capped } = capConfig(this.current, ceilingFor(settings, this.current.id));
      this.cache = { stored: this.current, settings, config, capped };
    }
    return this.cache;
  }

  /** Stable id (`config.id`); never changes while loaded. */
  get id(): string {
    return this.current.id;
  }

  get name(): string {
    return this.current.name;
  }

  get handle(): string | undefined {
    return this.current.handle;
  }

  /** The config that applies: the file's, under the owner's ceiling. */
  get config(): Readonly<AgentConfig> {
    return this.effective().config;
  }

  /** The config as the file holds it (may ask for more than the owner allows; see {@link capped}). */
  get fileConfig(): Readonly<AgentConfig> {
    return this.current;
  }

  /** What the owner's ceiling narrows in the file's config (empty: nothing). */
  get capped(): readonly CappedField[] {
    return this.effective().capped;
  }

  /** The owner's current settings (the ceiling and the config unlocks read them). */
  ownerSettings(): Readonly<Settings> {
    return this.settings();
  }

  /** Registry only: swaps the in-memory config after the file committed it. */
  setConfig(config: AgentConfig): void {
    this.current = config;
  }

  /** The read-only view extensions see. */
  view(): AgentView {
    return {
      id: this.id,
      name: this.name,
      ...(this.handle ? { handle: this.handle } : {}),
      filePath: this.filePath,
      config: this.config,
    };
  }
}
