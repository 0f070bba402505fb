/**
 * Provider kinds belong to the providers extension, not the kernel: the settings accept any kind name,
 * the extension lists a kind it does not serve as `unsupported_type` and refuses to check it, list its
 * models or resolve it (422 `unsupported_provider_type`, naming the kinds it serves), and another
 * extension that serves the kind still gets the model call.
 */
import t from 'tap';
import { join } from 'node:path';
import type { ModelClient } from '../contracts/model.js';
import { bootDaemon, ROOT } from './helpers/daemon.js';

const MODULE = join(ROOT, 'extensions/providers/index.ts');
const BEDROCK = { id: 'bed', type: 'bedrock', name: 'Bedrock', baseUrl: 'http://127.0.0.1:9' };
const SERVES = /which the providers extension does not serve \(it serves anthropic, openai, openai-compatible, openrouter\)/;

t.test('a kind the providers extension does not serve', async (t) => {
  const d = await bootDaemon(t, {
    extensions: { extensions: [{ name: 'providers', module: MODULE, enabled: true }] },
    settings: { providers: [BEDROCK, { id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: 'http://127.0.0.1:9/v1' }] },
  });

  t.test('the kernel accepts any kind name, but only a name', async (t) => {
    t.equal((await d.request('GET', '/settings')).body.providers[0].type, 'bedrock');
    const bad = await d.request('PUT', '/settings/providers', { value: [{ ...BEDROCK, type: 'Not a kind!' }] });
    t.equal(bad.status, 400);
    t.match(bad.body.error, /providers/);
  });

  t.test('listed and read as unsupported_type; check and models refused', async (t) => {
    const list = await d.request('GET', '/providers');
    t.same(list.body.providers.map((p: any) => [p.id, p.type, p.status]), [
      ['bed', 'bedrock', 'unsupported_type'],
      ['local', 'openai-compatible', 'unchecked'],
    ]);
    t.match((await d.request('GET', '/providers/bed')).body, { id: 'bed', type: 'bedrock', status: 'unsupported_type', lastCheck: null });
    for (const [method, path] of [['POST', '/providers/bed/check'], ['GET', '/providers/bed/models']] as const) {
      const res = await d.request(method, path);
      t.equal(res.status, 422, path);
      t.match(res.body, { code: 'unsupported_provider_type', provider: 'bed', type: 'bedrock', error: SERVES });
    }
  });

  t.test('a model call: the clear error, unless another extension serves the kind', async (t) => {
    const contributions = d.daemon.kernel.contributions;
    const context = { agentId: 'a1', agentProviders: [], readCredential: async () => undefined };
    await t.rejects(contributions.resolveModelClient('bed', context), { code: 'unsupported_provider_type', message: SERVES });
    t.equal(await contributions.resolveModelClient('nope', context), undefined, 'an unknown id is still nobody\'s');

    const client: ModelClient = { complete: async () => ({}) as never };
    contributions.forExtension('bedrock-test').modelClients({ resolve: (id) => (id === 'bed' ? client : undefined) });
    t.teardown(() => contributions.withdraw('bedrock-test'));
    t.equal(await contributions.resolveModelClient('bed', context), client, 'a later contributor is still asked');
  });
});
