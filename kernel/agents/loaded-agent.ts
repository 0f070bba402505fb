/** One agent the registry holds: its open file, config and the state the daemon keeps in memory. */
import type { AgentConfig } from '../../contracts/agent-config.js';
import type { AgentView } from '../../contracts/services.js';
import type { AgentFile } from './agent-file.js';

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

  constructor(
    readonly filePath: string,
    readonly file: AgentFile,
    config: AgentConfig,
  ) {
    this.current = config;
    this.displayState = config.state;
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

  get config(): Readonly<AgentConfig> {
    return this.current;
  }

  /** Registry only: swaps the in-memory config after the file committed it. */
  setConfig(config: AgentConfig): void {
    this.current = config;
  }

  /** The read-only view extensions see. */
  view(): AgentView {
    return { id: this.id, name: this.name, ...(this.handle ? { handle: this.handle } : {}), filePath: this.filePath, config: this.current };
  }
}
