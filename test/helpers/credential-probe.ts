/**
 * Reads an agent's sealed credential as the daemon uses it, from outside: the agent declares a provider
 * whose key is that credential (`provider:<providerId>`) and whose server is a fake OpenAI; the providers
 * extension's check (`POST /agents/{id}/providers/{providerId}/check`) then sends the key, and the fake
 * records it. The black-box form of `kernel.agents.readCredential`.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import type { DaemonClient } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The value the daemon sends for credential `provider:<id>` of `agentId`; undefined when it sends none. */
export type CredentialProbe = (d: DaemonClient, agentId: string, name: string) => Promise<string | undefined>;

export async function credentialProbe(t: Teardown): Promise<CredentialProbe> {
  const fake: FakeOpenAI = await startFakeOpenAI(t);
  return async (d, agentId, name) => {
    const providerId = /^provider:(.+)$/.exec(name)?.[1];
    if (!providerId) throw new Error(`${name} is not a provider credential`);
    const { config } = (await d.request('GET', `/agents/${agentId}/config`)).body;
    const declared = { id: providerId, type: 'openai-compatible', name: 'Probe', baseUrl: fake.baseUrl };
    const providers = [...(config.providers ?? []).filter((p: { id: string }) => p.id !== providerId), declared];
    if (JSON.stringify(providers) !== JSON.stringify(config.providers ?? [])) {
      const put = await d.request('PUT', `/agents/${agentId}/config`, { ...config, providers });
      if (put.status !== 200)
        throw new Error(`declaring the probe provider failed: ${put.status} ${JSON.stringify(put.body)}`);
    }
    const before = fake.requests.length;
    const check = await d.request('POST', `/agents/${agentId}/providers/${providerId}/check`);
    if (check.status !== 200)
      throw new Error(`the provider check failed: ${check.status} ${JSON.stringify(check.body)}`);
    const sent = fake.requests.slice(before);
    if (sent.length === 0) throw new Error(`the check reached no server: ${JSON.stringify(check.body)}`);
    const authorization = sent[0]!.headers.authorization;
    return authorization ? authorization.replace(/^Bearer /, '') : undefined;
  };
}
