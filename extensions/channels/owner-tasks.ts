/**
 * Owner tasks on chat platforms (docs/channels.md "Answering tasks from a chat app"): every task an agent
 * waits on (`ctx.agents.tasks`) is posted, with buttons, to the owner's own account on each platform the
 * agent has a connected adapter for and the owner named an account (`owners.<type>`). A press (or a reply
 * to the post) from that account answers it; anyone else is refused and the task stays open. A task closed
 * anywhere has its posts edited to say how.
 *
 * Buttons carry a random token mapped here to the task, never the task id: a token is the proof that
 * whoever answers saw the post. Tokens live in memory; after a daemon restart the resumed turn announces
 * its task again and it is posted afresh.
 */
import { randomBytes } from 'node:crypto';
import type { Logger, OwnerTask, OwnerTaskAnswer, OwnerTasksAccess } from '@agt/contracts';
import type { AdapterInbound, TaskPost, TaskPress, TaskPrompt } from './adapter.js';
import type { AdapterInstance } from './instance.js';
import {
  answerOfChoice,
  answerOfText,
  choicesOf,
  outcomeText,
  promptText,
  replyHint,
  takenText,
} from './task-prompts.js';

/** Open tasks remembered at most (the oldest go first: an agent that never loads again leaves its own). */
const MAX_OPEN = 1000;

export const NOT_OWNER = 'Only the owner of this agent can answer this.';
export const NOT_OPEN = 'This request is no longer open.';

interface Entry {
  task: OwnerTask;
  prompt: TaskPrompt;
  /** Per adapter type: the post, or the promise of it while it is being made. */
  posts: Map<string, TaskPost | Promise<TaskPost | undefined>>;
}

export interface OwnerTaskDeps {
  tasks: OwnerTasksAccess;
  /** The owner's account per adapter type (`owners` option), read at each use so a reconfigure applies. */
  owners(): Readonly<Record<string, string>>;
  /** The agent's adapters that are connected now. */
  connected(agentId: string): AdapterInstance[];
  logger: Logger;
}

const key = (agentId: string, id: string) => `${agentId}\u0000${id}`;
const sameAccount = (type: string, a: string, b: string) =>
  type === 'email' ? a.trim().toLowerCase() === b.trim().toLowerCase() : a === b;

export class OwnerTaskBridge {
  private readonly byToken = new Map<string, Entry>();
  private readonly byTask = new Map<string, Entry>();
  private readonly off: () => void;

  constructor(private readonly deps: OwnerTaskDeps) {
    this.off = deps.tasks.onChange((change) => {
      if (change.type === 'requested') this.offer(change.task);
      else void this.close(change.agentId, change.id, change.resolution);
    });
  }

  stop(): void {
    this.off();
  }

  /** An adapter connected: the agent's open tasks not yet posted on its platform are posted now. */
  connected(instance: AdapterInstance): void {
    let pending: OwnerTask[];
    try {
      pending = this.deps.tasks.pending(instance.agentId);
    } catch {
      return;
    }
    for (const task of pending) this.post(this.entryOf(task), instance);
  }

  /** A press of a posted button. */
  async press(instance: AdapterInstance, press: TaskPress): Promise<{ ok: boolean; message: string }> {
    if (!this.isOwner(instance.type, press.from)) return this.refuse(instance, press.from);
    const entry = this.byToken.get(press.token);
    if (!entry || entry.task.agentId !== instance.agentId || !entry.posts.has(instance.type))
      return { ok: false, message: NOT_OPEN };
    const answer = answerOfChoice(entry.task, press.choice);
    if (!answer) return { ok: false, message: NOT_OPEN };
    return this.answer(entry, answer);
  }

  /**
   * An inbound message that replies to a posted task (its `replyToId` or `threadId` is the post): answered
   * here, not delivered to the inbox. Undefined when it answers no post (an ordinary message).
   */
  async reply(instance: AdapterInstance, message: AdapterInbound): Promise<string | undefined> {
    const ids = [message.replyToId, message.threadId].filter((id): id is string => id !== undefined);
    if (ids.length === 0) return undefined;
    const entry = [...this.byTask.values()].find((candidate) => {
      const post = candidate.posts.get(instance.type);
      return (
        candidate.task.agentId === instance.agentId &&
        post !== undefined &&
        !(post instanceof Promise) &&
        (post.chatId === message.chatId || post.uniqueId === true) &&
        ids.includes(post.messageId)
      );
    });
    if (!entry) return undefined;
    if (!this.isOwner(instance.type, message.sender.id)) return this.refuse(instance, message.sender.id).message;
    const answer = answerOfText(entry.task, message.text);
    if (!answer) return `Not taken: ${replyHint(entry.task)}.`;
    return (await this.answer(entry, answer)).message;
  }

  private isOwner(type: string, from: string): boolean {
    const owner = this.deps.owners()[type];
    return owner !== undefined && owner !== '' && sameAccount(type, owner, from);
  }

  private refuse(instance: AdapterInstance, from: string): { ok: false; message: string } {
    // Who tried is worth a line (the owner may want to know); what they sent is not logged.
    this.deps.logger.warn(
      { agentId: instance.agentId, adapter: instance.type, from: from.slice(0, 200) },
      'owner task answer refused: not the owner',
    );
    return { ok: false, message: NOT_OWNER };
  }

  private async answer(entry: Entry, answer: OwnerTaskAnswer): Promise<{ ok: boolean; message: string }> {
    try {
      await this.deps.tasks.answer(entry.task.agentId, entry.task.id, answer);
      return { ok: true, message: takenText(answer) };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'not_found' || code === 'conflict') return { ok: false, message: NOT_OPEN };
      this.deps.logger.warn(
        { agentId: entry.task.agentId, err: error instanceof Error ? error.message : String(error) },
        'owner task answer failed',
      );
      return { ok: false, message: 'The answer could not be taken; try again or answer from the console.' };
    }
  }

  private entryOf(task: OwnerTask): Entry {
    const existing = this.byTask.get(key(task.agentId, task.id));
    if (existing) return existing;
    const token = randomBytes(16).toString('base64url');
    const prompt: TaskPrompt = {
      token,
      kind: task.kind,
      text: promptText(task),
      choices: choicesOf(task),
      acceptsText: task.kind === 'ask' || task.kind === 'budget',
    };
    const entry: Entry = { task, prompt, posts: new Map() };
    this.byTask.set(key(task.agentId, task.id), entry);
    this.byToken.set(token, entry);
    if (this.byTask.size > MAX_OPEN) {
      const oldest = this.byTask.values().next().value as Entry;
      this.forget(oldest);
    }
    return entry;
  }

  private offer(task: OwnerTask): void {
    const instances = this.deps.connected(task.agentId);
    if (!instances.some((instance) => this.postable(instance))) return;
    const entry = this.entryOf(task);
    for (const instance of instances) this.post(entry, instance);
  }

  private postable(instance: AdapterInstance): boolean {
    const adapter = instance.connectedAdapter();
    return adapter?.postTask !== undefined && Boolean(this.deps.owners()[instance.type]);
  }

  private post(entry: Entry, instance: AdapterInstance): void {
    const adapter = instance.connectedAdapter();
    const owner = this.deps.owners()[instance.type];
    if (!adapter?.postTask || !owner || entry.posts.has(instance.type)) return;
    const posting = adapter.postTask(owner, entry.prompt).then(
      (post) => {
        if (entry.posts.get(instance.type) === posting) entry.posts.set(instance.type, post);
        return post;
      },
      (error: unknown) => {
        if (entry.posts.get(instance.type) === posting) entry.posts.delete(instance.type);
        this.deps.logger.warn(
          {
            agentId: instance.agentId,
            adapter: instance.type,
            err: (error instanceof Error ? error.message : String(error)).slice(0, 300),
          },
          'owner task not posted',
        );
        return undefined;
      },
    );
    entry.posts.set(instance.type, posting);
  }

  private async close(agentId: string, id: string, resolution: string): Promise<void> {
    const entry = this.byTask.get(key(agentId, id));
    if (!entry) return;
    this.forget(entry);
    const outcome = outcomeText(resolution);
    const connected = new Map(this.deps.connected(agentId).map((instance) => [instance.type, instance]));
    for (const [type, posted] of entry.posts) {
      const post = await posted;
      const adapter = connected.get(type)?.connectedAdapter();
      if (!post || !adapter?.closeTask) continue;
      await adapter
        .closeTask(post, entry.prompt, outcome)
        .catch((error: unknown) =>
          this.deps.logger.debug(
            { agentId, adapter: type, err: error instanceof Error ? error.message : String(error) },
            'owner task post not updated',
          ),
        );
    }
  }

  private forget(entry: Entry): void {
    this.byTask.delete(key(entry.task.agentId, entry.task.id));
    this.byToken.delete(entry.prompt.token);
  }
}
