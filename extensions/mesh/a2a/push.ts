/**
 * A2A push notifications: each update of a task (a status or an artifact, as a stream would carry it) is POSTed
 * to every webhook the task's caller configured, as the protocol's JSON `StreamResponse`, in order, through the
 * agent's fetch policy (`ctx.agents.fetch`: a URL the owner's fetch ceiling does not allow is never called).
 * Each call carries the caller's `token` as `X-A2A-Notification-Token` and, when the agent has an identity, a
 * signature: `X-Agt-Signature`, a JWS with a detached payload (`<protected>..<signature>`, EdDSA by the agent's
 * did:key, over the body's bytes), which a receiver checks with nothing but the agent's DID. A failed call
 * (network, 429, 5xx) is tried again after 0.5, 1 and 2 s; a refusal by the policy or another 4xx is not.
 */
import type { StreamResponse } from '@a2a-js/sdk';
import type { AgentFetch, AgentKeysAccess, Logger } from '@agt/contracts';
import type { PushConfig, TaskRecord } from './tasks.js';

const RETRY_MS = [500, 1000, 2000];
const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

export class PushNotifier {
  /** Per task, the end of its chain of sends: updates go out in order. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly fetch: () => AgentFetch | undefined,
    private readonly keys: AgentKeysAccess,
    private readonly didOf: (agentId: string) => string | undefined,
    private readonly logger: Logger,
  ) {}

  notify(task: TaskRecord, event: StreamResponse): void {
    if (task.push.length === 0) return;
    const configs = [...task.push];
    const previous = this.chains.get(task.id) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        const { StreamResponse: codec } = await import('@a2a-js/sdk');
        const body = JSON.stringify(codec.toJSON(event));
        const signature = await this.signature(task.agentId, body);
        for (const config of configs) await this.send(task, config, body, signature);
      })
      .catch((error) => this.logger.warn({ err: error, taskId: task.id }, 'a2a: a push notification failed'));
    this.chains.set(task.id, next);
    void next.then(() => {
      if (this.chains.get(task.id) === next) this.chains.delete(task.id);
    });
  }

  private async signature(agentId: string, body: string): Promise<string | undefined> {
    const did = this.didOf(agentId);
    if (!did) return undefined;
    const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JOSE', kid: `${did}#${did.slice('did:key:'.length)}` }));
    try {
      const signed = await this.keys.sign(agentId, Buffer.from(`${header}.${b64url(body)}`, 'ascii'));
      return `${header}..${b64url(signed)}`;
    } catch {
      // The agent's key is out of reach (locked credentials): the notification goes unsigned.
      return undefined;
    }
  }

  private async send(task: TaskRecord, config: PushConfig, body: string, signature: string | undefined) {
    const fetch = this.fetch();
    if (!fetch) return;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...(config.token ? { 'x-a2a-notification-token': config.token } : {}),
      ...(signature ? { 'x-agt-signature': signature } : {}),
    };
    for (let attempt = 0; ; attempt++) {
      let retry: boolean;
      let why: string;
      try {
        const answer = await fetch(task.agentId, {
          url: config.url,
          method: 'POST',
          headers,
          body,
          timeoutMs: 10_000,
          maxBytes: 1024,
        });
        if (answer.status < 300) return;
        retry = answer.status === 429 || answer.status >= 500;
        why = `status ${answer.status}`;
      } catch (error) {
        const code = (error as { code?: string }).code;
        // The policy's refusal, a bad URL or an agent gone: trying again changes nothing.
        retry = code !== 'forbidden' && code !== 'bad_request' && code !== 'not_found';
        why = code ?? 'network failure';
      }
      if (!retry || attempt >= RETRY_MS.length) {
        this.logger.warn({ taskId: task.id, config: config.id, why }, 'a2a: push notification not delivered');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[attempt]).unref());
    }
  }
}
