/**
 * A provider kind the providers extension does not serve, at the kernel's model-call resolution: the
 * clear `unsupported_provider_type` error, unless another extension contributes a client for it. In
 * process: it asks the kernel's contributions directly and contributes a client no manifest names.
 */
import t from 'tap';
import { join } from 'node:path';
import type { ModelClient } from '../contracts/model.js';
import { bootDaemon, ROOT } from './helpers/daemon.js';

const MODULE = join(ROOT, 'extensions/providers/index.ts');
const BEDROCK = { id: 'bed', type: 'bedrock', name: 'Bedrock', baseUrl: 'http://127.0.0.1:9' };
const SERVES =
  /which the providers extension does not serve \(it serves anthropic, openai, openai-compatible, openrouter\)/;

t.test('a kind the providers extension does not serve', async (t) => {
  const d = await bootDaemon(t, {
    extensions: { extensions: [{ name: 'providers', module: MODULE, enabled: true }] },
    settings: { providers: [BEDROCK] },
  });

  t.test('a model call: the clear error, unless another extension serves the kind', async (t) => {
    const contributions = d.daemon.kernel.contributions;
    const context = { agentId: 'a1', agentProviders: [], readCredential: async () => undefined };
    await t.rejects(contributions.resolveModelClient('bed', context), {
      code: 'unsupported_provider_type',
      message: SERVES,
    });
    t.equal(await contributions.resolveModelClient('nope', context), undefined, "an unknown id is still nobody's");

    const client: ModelClient = { complete: async () => ({}) as never };
    contributions.forExtension('bedrock-test').modelClients({ resolve: (id) => (id === 'bed' ? client : undefined) });
    t.teardown(() => contributions.withdraw('bedrock-test'));
    t.equal(await contributions.resolveModelClient('bed', context), client, 'a later contributor is still asked');
  });
});
