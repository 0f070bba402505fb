#!/usr/bin/env node
/**
 * The conformance suite's client command for agt (docs/mcp.md "Conformance"): `agt-client.mjs <server URL>`
 * with `MCP_CONFORMANCE_SCENARIO` (and `MCP_CONFORMANCE_CONTEXT`) set by the suite. It drives a running
 * daemon over its HTTP API only (`AGT_CONFORMANCE_URL`, `AGT_CONFORMANCE_TOKEN`, the scenario's agent in
 * `AGT_CONFORMANCE_AGENTS`): registers the scenario's server under the scenario's name (with `oauth` for `auth/*`), signs in
 * as the owner would (the suite's authorization server answers at once; the browser's redirect is followed
 * to the daemon's loopback listener), declares the server in the agent, and has the agent call the
 * server's first tool through its model (the test's fake model runs `call <tool> <json>`). Asks the
 * server raises (elicitation) are answered `{}`, so the form's defaults apply. A call that fails with
 * `mcp_signin_required` (the server wants more scopes) is the owner's cue to sign in again, as the owner
 * would after reading the error; then the call is made once more. The agent is unloaded at the end, which
 * closes its session with the server. Exit 0 when the tool ran.
 */
import { get } from 'node:http';

const [serverUrl] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const base = process.env.AGT_CONFORMANCE_URL;
const token = process.env.AGT_CONFORMANCE_TOKEN;
// One agent per scenario (several run at once): `AGT_CONFORMANCE_AGENTS` maps a scenario to its agent's id.
const agent = JSON.parse(process.env.AGT_CONFORMANCE_AGENTS || '{}')[scenario];
if (!serverUrl || !base || !token || !agent) {
  console.error(
    'usage: AGT_CONFORMANCE_URL=… AGT_CONFORMANCE_TOKEN=… AGT_CONFORMANCE_AGENTS={"<scenario>": "<agent id>"} agt-client.mjs <server URL>',
  );
  process.exit(2);
}
/** The registration's name: the scenario's, in the characters a server name allows. */
const name = scenario.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'conf';

async function api(method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** A browser following a redirect from another site (the daemon's loopback listener checks these). */
const browserGet = (url) =>
  new Promise((resolve, reject) => {
    const headers = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    get(url, { headers }, (res) => {
      let page = '';
      res.on('data', (chunk) => (page += chunk));
      res.on('end', () => resolve({ status: res.statusCode, page }));
    }).on('error', reject);
  });

const auth = scenario.startsWith('auth/');
await api('DELETE', `/mcp/servers/${name}`);
// The owner's OAuth settings a scenario implies: a client registered beforehand (its secret stored sealed
// through the API), or the Client ID Metadata Document the owner publishes (the suite's own URL).
const oauth = context.client_id
  ? { clientId: context.client_id }
  : scenario === 'auth/basic-cimd'
    ? { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' }
    : {};
const registration = { name, type: 'http', url: serverUrl, ...(auth ? { oauth } : {}) };
const registered = await api('POST', '/mcp/servers', registration);
if (registered.status !== 201) throw new Error(`registering: ${JSON.stringify(registered.body)}`);

if (auth && context.client_secret) {
  const stored = await api('PUT', `/mcp/servers/${name}/client-secret`, { value: context.client_secret });
  if (stored.status !== 200) throw new Error(`storing the client secret: ${JSON.stringify(stored.body)}`);
}
async function signIn() {
  const started = await api('POST', `/mcp/servers/${name}/login`);
  if (started.status !== 200) throw new Error(`sign-in: ${JSON.stringify(started.body)}`);
  if (started.body.authorizationUrl) {
    const approved = await fetch(started.body.authorizationUrl, { redirect: 'manual' });
    const location = approved.headers.get('location');
    if (!location) throw new Error(`the authorization server answered ${approved.status} without a redirect`);
    const back = await browserGet(location);
    if (back.status !== 200) throw new Error(`the sign-in failed: ${back.page.replace(/<[^>]+>/g, ' ').trim()}`);
  }
}
async function connect() {
  const restarted = await api('POST', `/agents/${agent}/mcp/${name}/restart`);
  if (restarted.body?.status !== 'connected')
    throw new Error(`the server did not connect: ${JSON.stringify(restarted.body)}`);
}
if (auth) await signIn();

await api('PATCH', `/agents/${agent}/config`, { mcp: { servers: [{ name, transport: 'http' }] } });
await connect();
/**
 * Ends the agent's session with the server before exiting: the suite stops its server after the client
 * exits, and a server that holds a stream open (`sse-retry`'s GET stream) waits for it to close.
 */
async function finish(code) {
  await api('POST', `/agents/${agent}/unload`);
  process.exit(code);
}
if (scenario === 'initialize') await finish(0);

const tools = (await api('GET', `/agents/${agent}/tools`)).body.tools.filter((t) => t.source === `mcp:${name}`);
const tool = tools.find((t) => !/_(resources|prompts)_(list|read|get)$/.test(t.name));
if (!tool) throw new Error('the server offers no tool');
const args = tool.name.endsWith('add_numbers') ? { a: 2, b: 3 } : {};
// The model (the test's fake) calls the tool and answers `RESULT <ok|error> <the tool's result>`.
async function callTool() {
  let done = false;
  const turn = api('POST', `/agents/${agent}/chat?wait=true`, {
    text: `call ${tool.name} ${JSON.stringify(args)}`,
  }).finally(() => (done = true));
  // Answer the server's questions with an empty form (its defaults apply) while the turn runs.
  while (!done) {
    for (const ask of (await api('GET', `/agents/${agent}/asks`)).body.asks ?? [])
      await api('POST', `/agents/${agent}/asks/${ask.requestId}/respond`, { answer: '{}' });
    await sleep(50);
  }
  return (await turn).body;
}
let reply = await callTool();
if (auth && typeof reply.text === 'string' && reply.text.includes('mcp_signin_required')) {
  // The server wants more scopes: the owner signs in again (the sign-in asks for them) and retries.
  console.log(JSON.stringify({ tool: tool.name, reply: reply.text }));
  await signIn();
  await connect();
  reply = await callTool();
}
console.log(JSON.stringify({ tool: tool.name, reply: reply.text }));
await finish(typeof reply.text === 'string' && reply.text.startsWith('RESULT ok') ? 0 : 1);
