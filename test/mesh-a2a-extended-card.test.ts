/**
 * The A2A authenticated extended agent card with the built daemon: the public card (v1.0 and v0.3 shapes) declares
 * the owner's bearer scheme and the capability, signed as served; with the daemon token the SDK 1.x client (JSON-RPC,
 * and its REST transport), its v0.3 client and plain HTTP get the extended card (the agent's enabled tools as skills,
 * its model and limits), signed by the agent's key; without a token or with a wrong one every binding answers 401
 * with `WWW-Authenticate: Bearer` and no card. No model is called: the agent never runs a turn here.
 */
import t from 'tap';
import { AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { didKey, signedAsServed as signedByAgent } from './helpers/a2a-card.js';
import { bootMeshDaemon, createMeshAgent } from './helpers/mesh.js';

const d = await bootMeshDaemon(t, { meshConfig: { mdns: { enabled: false } } });
const agent = await createMeshAgent(d, 'Keeper', {
  handle: 'keeper',
  description: 'Keeps notes',
  model: { provider: 'example-provider', model_id: 'example-model' },
  tools: [
    { name: 'ask', enabled: true },
    { name: 'fs_write', enabled: true, restricted: true },
    { name: 'msg_send', enabled: false },
  ],
  limits: { max_tool_calls_per_turn: 7, turn_timeout_ms: 90_000 },
});
const cardUrl = `${d.meshUrl}/agents/keeper/.well-known/agent-card.json`;
const a2aUrl = `${d.meshUrl}/agents/keeper/a2a`;
const bearer = { authorization: `Bearer ${d.token}` };
const wrong = { authorization: `Bearer ${d.token.slice(0, -2)}xx` };

const signedAsServed = (card: any) => signedByAgent(card, agent.did);
const toolSkillIds = (card: any) =>
  (card.skills ?? []).map((skill: any) => skill.id).filter((id: string) => id.startsWith('tool:'));
const rpc = (method: string, headers: Record<string, string>, version?: string) =>
  fetch(a2aUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(version ? { 'a2a-version': version } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }),
  });

t.test('the public card declares the bearer scheme and the extended card, signed as served', async (t) => {
  const v1 = await (await fetch(cardUrl, { headers: { 'a2a-version': '1.0' } })).json();
  t.equal(v1.capabilities.extendedAgentCard, true);
  t.match(v1.securitySchemes, { agtOwnerToken: { httpAuthSecurityScheme: { scheme: 'Bearer' } } });
  t.equal(v1.securityRequirements, undefined, 'no requirement on the card: the other methods stay open');
  t.same(toolSkillIds(v1), [], 'the public card shows no tools');
  t.ok(signedAsServed(v1), 'the v1.0 card verifies as served');
  await t.resolves(verifyAgentCardSignature(didKey)(v1), "the SDK's verifier accepts it");

  const v03 = await (await fetch(cardUrl)).json();
  t.equal(v03.supportsAuthenticatedExtendedCard, true);
  t.match(v03.securitySchemes, { agtOwnerToken: { type: 'http', scheme: 'bearer' } });
  t.ok(signedAsServed(v03), 'the v0.3 card verifies as served');
  await t.resolves(verifyAgentCardSignature(didKey)(v03), "the v1.0 SDK's verifier accepts the v0.3 card too");
  t.notOk(
    signedAsServed({ ...v03, securitySchemes: { agtOwnerToken: { type: 'http', scheme: 'basic' } } }),
    'its scheme is covered',
  );
});

t.test('the SDK 1.x client with the owner token gets the extended card; without it, none', async (t) => {
  const client = await new ClientFactory().createFromUrl(cardUrl, '');
  const checked: any[] = [];
  const card: any = await client.getAgentCard({ serviceParameters: bearer }, async (got) => {
    // The client holds the card in its proto form; the SDK's verifier reads the JSON form.
    await verifyAgentCardSignature(didKey)(AgentCard.toJSON(got) as any);
    checked.push(got);
  });
  t.equal(checked.length, 1, "the SDK's verifier accepted the extended card");
  t.same(toolSkillIds(card), ['tool:ask', 'tool:fs_write'], 'the enabled tools as skills');
  t.match(
    card.skills.find((skill: any) => skill.id === 'tool:fs_write'),
    {
      tags: ['tool', 'restricted'],
      description: /owner's approval/,
    },
  );
  const details = card.capabilities.extensions.find((e: any) => e.uri === 'urn:agt:a2a:agent-details:v1');
  t.match(details.params, {
    model: { provider: 'example-provider', model_id: 'example-model' },
    limits: { max_tool_calls_per_turn: 7, turn_timeout_ms: 90_000 },
  });

  const anonymous = await new ClientFactory().createFromUrl(cardUrl, '');
  await t.rejects(anonymous.getAgentCard(), 'no token: refused');
  await t.rejects(anonymous.getAgentCard({ serviceParameters: wrong }), 'a wrong token: refused');

  const rest = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory()],
      preferredTransports: ['HTTP+JSON'],
    }),
  ).createFromUrl(cardUrl, '');
  const overRest: any = await rest.getAgentCard({ serviceParameters: bearer });
  t.same(toolSkillIds(overRest), ['tool:ask', 'tool:fs_write'], 'over HTTP+JSON too');
  await t.rejects(rest.getAgentCard({ serviceParameters: wrong }), 'HTTP+JSON with a wrong token: refused');

  const v03 = new LegacyJsonRpcTransport({
    endpoint: a2aUrl,
    fetchImpl: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as object), ...bearer } }),
  });
  const legacyCard: any = await v03.getExtendedAgentCard({ tenant: '' } as any);
  t.same(toolSkillIds(legacyCard), ['tool:ask', 'tool:fs_write'], 'the v0.3 client gets it too');
  await t.rejects(
    new LegacyJsonRpcTransport({ endpoint: a2aUrl }).getExtendedAgentCard({ tenant: '' } as any),
    'the v0.3 client without a token: refused',
  );
});

t.test('JSON-RPC and HTTP+JSON as sent: 401 with a challenge, else the card as signed', async (t) => {
  for (const [version, method] of [
    ['1.0', 'GetExtendedAgentCard'],
    [undefined, 'agent/getAuthenticatedExtendedCard'],
  ] as const) {
    const none = await rpc(method, {}, version);
    t.equal(none.status, 401, `${method} without a token`);
    t.equal(none.headers.get('www-authenticate'), 'Bearer realm="agt-mesh"');
    const noneBody = await none.json();
    t.match(noneBody, { jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    t.equal(noneBody.result, undefined, 'and no card');
    const bad = await rpc(method, wrong, version);
    t.equal(bad.status, 401, `${method} with a wrong token`);
    t.equal(bad.headers.get('www-authenticate'), 'Bearer realm="agt-mesh", error="invalid_token"');
    t.notOk(JSON.stringify(await bad.json()).includes(d.token.slice(0, 8)), 'the token is not echoed');
    const good = await rpc(method, bearer, version);
    t.equal(good.status, 200);
    t.equal(good.headers.get('cache-control'), 'no-store');
    const { result } = await good.json();
    t.ok(signedAsServed(result), `${method}: the extended card verifies as served`);
    t.notOk(JSON.stringify(result).includes(d.token), 'the card holds no credential');
  }
  const lowercase = await rpc('GetExtendedAgentCard', { authorization: `bearer  ${d.token}` }, '1.0');
  t.equal(lowercase.status, 200, 'the spellings the main API accepts');

  const restUrl = `${a2aUrl}/extendedAgentCard`;
  const none = await fetch(restUrl);
  t.equal(none.status, 401);
  t.equal(none.headers.get('www-authenticate'), 'Bearer realm="agt-mesh"');
  t.match(await none.json(), { error: { code: 401, status: 'UNAUTHENTICATED' } });
  const bad = await fetch(restUrl, { headers: wrong });
  t.equal(bad.status, 401);
  t.equal(bad.headers.get('www-authenticate'), 'Bearer realm="agt-mesh", error="invalid_token"');
  const good = await fetch(restUrl, { headers: { ...bearer, 'a2a-version': '1.0' } });
  t.equal(good.status, 200);
  const card = await good.json();
  t.ok(signedAsServed(card), 'the REST extended card verifies as served');
  await t.resolves(verifyAgentCardSignature(didKey)(card), "and the SDK's verifier accepts it");

  const open = await rpc('GetTask', {}, '1.0');
  t.equal(open.status, 200, 'the other methods need no token');
  t.not((await open.json()).error?.code, -32600, 'and answer as before');
});
