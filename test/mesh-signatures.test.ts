/**
 * One canonical JSON and one signature encoding: RFC 8785 test vectors; values with no
 * canonical form refused (`1e400` and `null` never sign alike); the strict reader refusing duplicate
 * member names, out-of-range numbers and deep nesting; a signature accepted only in its one exact form
 * (mesh envelopes and cards, and the kernel's identity attestations); and over real HTTP to a mesh
 * server: the variants answered 403, the malformed envelopes 400, a payload nested 3,000 deep 400
 * (never 500), the whole-inbox rate 429.
 */
import t from 'tap';
import { sign } from 'node:crypto';
import nacl from 'tweetnacl';
import {
  canonicalJson,
  didFromPublicKey,
  formatSignature,
  parseSignature,
  parseStrictJson,
  signatureFromBase64,
  verifyDidSignature,
} from '../contracts/agent-keys.js';
import { attest, verifyAttestation } from '../kernel/agent-identity/attestations.js';
import { acceptEnvelope } from '../extensions/mesh/inbound.js';
import { RateLimiter } from '../extensions/mesh/rate-limit.js';
import { bootMeshDaemon, createMeshAgent, eventually, postJson, signedEnvelope, testKey } from './helpers/mesh.js';
import { startToolDriver } from './helpers/tool-driver.js';

const doubleOf = (hex: string) => Buffer.from(hex, 'hex').readDoubleBE(0);
const refused = (fn: () => unknown) => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return { status: (error as { statusCode?: number }).statusCode, message: (error as Error).message };
  }
};
const nested = (depth: number, inner: unknown = 1): unknown => {
  let value = inner;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { x: value };
  return value;
};

t.test('RFC 8785 number vectors (Appendix B)', async (t) => {
  const vectors: Array<[string, string]> = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  for (const [bits, expected] of vectors) {
    t.equal(canonicalJson(doubleOf(bits)), expected, bits);
    t.equal(canonicalJson(parseStrictJson(expected)), expected, `${expected} round-trips`);
  }
  for (const bits of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000'])
    t.match(
      refused(() => canonicalJson(doubleOf(bits))),
      { status: 400 },
      `${bits} (NaN or Infinity) has no canonical form`,
    );
  t.equal(canonicalJson(parseStrictJson('[1e21, -0, 5e-7, 1E-7, 100e-2, 0.1e1]')), '[1e+21,0,5e-7,1e-7,1,1]');
});

t.test('RFC 8785 structures: escaping and UTF-16 member order', async (t) => {
  // The RFC's §3.2.2 example (its authors' test data `values.json`).
  const values = String.raw`{"numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001], "escaping": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`;
  t.equal(
    canonicalJson(parseStrictJson(values)),
    String.raw`{"escaping":"€$\u000f\nA'B\"\\\\\"/","literals":[null,true,false],"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}`,
  );
  // `weird.json`: names sorted by UTF-16 code units, so U+1F602 (d83d de02) comes before U+FB33.
  const weird = String.raw`{"\u20ac": "Euro Sign", "1": "One", "\u0080": "Control\u007f", "\ud83d\ude02": "Smiley", "\u00f6": "Latin Small Letter O With Diaeresis", "\ufb33": "Hebrew Letter Dalet With Dagesh", "</script>": "Browser Challenge"}`;
  const expected =
    '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude02":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
  const canonical = canonicalJson(parseStrictJson(weird));
  t.equal(canonical, expected);
  t.equal(canonicalJson(parseStrictJson(canonical)), canonical, 'the canonical text is its own canonical form');
  t.equal(
    canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] }),
    '{"a":[1,{"d":2}],"b":1}',
    'an undefined member is absent',
  );
});

t.test('values without a canonical form are refused, never written as null', async (t) => {
  t.equal(canonicalJson({ x: null }), '{"x":null}');
  const cases: Array<[string, unknown]> = [
    ['Infinity', { x: Infinity }],
    ['-Infinity', [-Infinity]],
    ['NaN', { x: Number.NaN }],
    ['undefined in an array', [1, undefined]],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    ['a hole in an array', [1, , 2]],
    ['a bigint', { x: 1n }],
    ['a function', { x: () => 1 }],
    ['a Date', { x: new Date(0) }],
    ['a Map', new Map()],
    ['a lone surrogate', { x: '\ud800' }],
    ['a lone surrogate in a name', { '\udc00': 1 }],
    ['undefined', undefined],
    ['65 levels', nested(65)],
  ];
  for (const [what, value] of cases)
    t.match(
      refused(() => canonicalJson(value)),
      { status: 400, message: /not canonical JSON/ },
      what,
    );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  t.match(
    refused(() => canonicalJson(cyclic)),
    { status: 400 },
    'a cycle',
  );
  t.equal(canonicalJson(nested(64)).length > 0, true, '64 levels are fine');
  t.equal(
    canonicalJson(Object.assign(Object.create(null), { b: 2, a: 1 })),
    '{"a":1,"b":2}',
    'a null-prototype object is plain',
  );
});

t.test('the strict reader refuses what JSON.parse would hide', async (t) => {
  const cases: Array<[string, string]> = [
    ['1e400', '{"x":1e400}'],
    ['-1e400', '[-1e400]'],
    ['1E+999', '{"a":"e","b":1E+999}'],
    ['a duplicate name', '{"to":"a","to":"b"}'],
    ['a duplicate name written with an escape', String.raw`{"to":"a","\u0074o":"b"}`],
    ['a duplicate name deep inside', '{"p":[{"k":1,"j":2,"k":3}]}'],
    ['__proto__', '{"__proto__":{"x":1}}'],
    ['a lone surrogate', String.raw`{"x":"\ud800"}`],
    ['NaN', '{"x":NaN}'],
    ['Infinity', '{"x":Infinity}'],
    ['65 levels', '['.repeat(65) + ']'.repeat(65)],
    ['3,000 levels', `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`],
    ['bad syntax', '{"x":1,}'],
    ['trailing text', '{"x":1} {}'],
  ];
  for (const [what, text] of cases)
    t.match(
      refused(() => parseStrictJson(text)),
      { status: 400 },
      what,
    );
  t.same(
    parseStrictJson('{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}],"t":true,"f":false,"n":null,"s":"e\\"E,1e400"}'),
    { a: { k: 1 }, b: { k: 2 }, c: [{ k: 1 }, { k: 2 }], t: true, f: false, n: null, s: 'e"E,1e400' },
    'equal names in different objects, and look-alikes inside strings, are fine',
  );
  t.ok(Array.isArray(parseStrictJson('['.repeat(64) + ']'.repeat(64))), '64 levels are fine');
});

t.test('one signature encoding: 88 characters of padded base64, byte-exact', async (t) => {
  const pair = nacl.sign.keyPair();
  const did = didFromPublicKey(pair.publicKey);
  // A message whose signature holds '+' or '/', so its base64url form differs.
  let message = Buffer.from('m');
  let signature = nacl.sign.detached(message, pair.secretKey);
  for (let i = 0; !/[+/]/.test(Buffer.from(signature).toString('base64')); i++)
    signature = nacl.sign.detached((message = Buffer.from(`m${i}`)), pair.secretKey);
  const text = formatSignature(signature);
  const b64 = text.slice('ed25519:'.length);
  t.equal(b64.length, 88);
  t.ok(verifyDidSignature(did, message, parseSignature(text)!), 'the one form verifies');
  const spare =
    b64.slice(0, 85) +
    'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[
      'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.indexOf(b64[85]!) | 1
    ] +
    '==';
  const variants: Array<[string, string, boolean]> = [
    // [what, text, a lenient decoder reads the same 64 bytes]
    ['a trailing space', `${text} `, true],
    ['a trailing newline', `${text}\n`, true],
    ['a space after the prefix', `ed25519: ${b64}`, true],
    ['base64url', `ed25519:${b64.replace(/\+/g, '-').replace(/\//g, '_')}`, true],
    ['base64url without padding', `ed25519:${b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`, true],
    ['no padding', `ed25519:${b64.replace(/=+$/, '')}`, true],
    ['trailing !!', `${text}!!`, true],
    ['non-zero spare bits', `ed25519:${spare}`, true],
    [
      '63 bytes',
      formatSignature(signature).slice(0, 8) + Buffer.from(signature.slice(0, 63)).toString('base64'),
      false,
    ],
    ['65 bytes', `ed25519:${Buffer.concat([signature, Buffer.from([0])]).toString('base64')}`, false],
    ['another prefix', `ED25519:${b64}`, false],
  ];
  for (const [what, variant, lenientSame] of variants) {
    t.equal(parseSignature(variant), undefined, what);
    if (lenientSame)
      t.same(
        Buffer.from(variant.slice(variant.indexOf(':') + 1), 'base64'),
        Buffer.from(signature),
        `(${what}: a lenient decoder would have read the real signature)`,
      );
  }
  t.equal(signatureFromBase64(`${b64} `), undefined, 'the bare form is as strict');

  // The kernel's identity attestations use the same encoding.
  const agentDid = didFromPublicKey(nacl.sign.keyPair().publicKey);
  const record = attest('owner', did, agentDid, 'agent-1', (bytes) => nacl.sign.detached(bytes, pair.secretKey));
  t.ok(verifyAttestation(record, agentDid, 'agent-1'), 'an attestation verifies');
  for (const suffix of [' ', '!!', '\n'])
    t.notOk(
      verifyAttestation({ ...record, signature: record.signature + suffix }, agentDid, 'agent-1'),
      `an attestation with ${JSON.stringify(suffix)} does not`,
    );
  t.notOk(
    verifyAttestation(
      { ...record, signature: record.signature.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') },
      agentDid,
      'agent-1',
    ),
    'nor in base64url',
  );
});

t.test('acceptEnvelope checks depth before any walk, on its own (in-process delivery)', async (t) => {
  const key = testKey();
  const to = testKey().did;
  let touched = 0;
  const deps = {
    agents: {} as never,
    inbox: { deliver: async () => (touched++, { messageId: 1 }), get: async () => undefined },
    limiter: new RateLimiter({ limit: 100, windowMs: 60_000 }),
  };
  const agent = {
    view: { id: 'a1', config: { messaging: { allow_unsigned: true } } } as never,
    handle: 'a1',
    did: to,
    publicKey: undefined,
  };
  const envelope = signedEnvelope(key, to, 'deep');
  const deep = { ...envelope, payload: { ...envelope.payload, attachments: [nested(3_000)] } };
  const error = await acceptEnvelope(deps, agent, deep as never).then(
    () => undefined,
    (caught: unknown) => caught as { statusCode?: number; message: string },
  );
  t.match(error, { statusCode: 400, message: /nests deeper than 64/ });
  t.equal(touched, 0, 'nothing was stored');
  const { signature: _s, ...unsigned } = deep;
  t.match(
    await acceptEnvelope(deps, agent, unsigned as never).catch((caught: unknown) => caught),
    { statusCode: 400 },
    'unsigned (allowed) too: it would have gone straight to the inbox',
  );
  t.equal(touched, 0);
});

t.test('over HTTP: variants 403, malformed 400, deep 400, inbox rate 429', async (t) => {
  const driver = await startToolDriver(t);
  const d = await bootMeshDaemon(t, {
    meshConfig: { inboxRateLimit: 3, mdns: { enabled: false } },
    settings: { providers: [driver.provider] },
  });
  const bob = await createMeshAgent(d, 'Bob', { handle: 'bob' });
  const carol = await createMeshAgent(d, 'Carol', {
    handle: 'carol',
    model: driver.model,
    tools: [{ name: 'msg_send', enabled: true }],
  });
  const inboxUrl = `${d.meshUrl}/agents/bob/inbox`;
  const eve = testKey();

  let good = signedEnvelope(eve, bob.did, 'hello');
  while (!/[+/]/.test(good.signature)) good = signedEnvelope(eve, bob.did, 'hello');
  const b64 = good.signature.slice('ed25519:'.length);
  for (const [what, signature] of [
    ['a trailing space', `${good.signature} `],
    ['base64url', `ed25519:${b64.replace(/\+/g, '-').replace(/\//g, '_')}`],
    ['trailing !!', `${good.signature}!!`],
    ['no padding', `ed25519:${b64.slice(0, 86)}`],
    ['wrong length', `ed25519:${b64.slice(0, 84)}==`],
  ]) {
    t.match(await postJson(inboxUrl, { ...good, signature }), { status: 403, body: { code: 'forbidden' } }, what);
  }
  t.match(await postJson(inboxUrl, good), { status: 202 }, 'the exact signature is accepted');

  // Signed over `"x":null`, sent as `"x":1e400` (JSON.parse reads Infinity, which JSON.stringify wrote as null).
  const withNull = signedEnvelope(eve, bob.did, 'numbers');
  const signedNull = { ...withNull, payload: { ...withNull.payload, x: null } };
  const signer = { did: eve.did, privateKey: eve.privateKey };
  const { signature: _old, ...body } = signedNull;
  const signature = formatSignature(sign(null, Buffer.from(canonicalJson(body)), signer.privateKey));
  const text = JSON.stringify({ ...body, signature });
  t.match(
    await postJson(inboxUrl, text.replace('"x":null', '"x":1e400')),
    { status: 400, body: { code: 'bad_request', error: /finite/ } },
    '1e400 in place of null',
  );
  t.match(await postJson(inboxUrl, text.replace('"x":null', '"x":NaN')), { status: 400 }, 'NaN');
  t.match(await postJson(inboxUrl, text.replace('"x":null', '"x":-Infinity')), { status: 400 }, '-Infinity');
  const other = testKey().did;
  t.match(
    await postJson(inboxUrl, text.replace(`"to":"${bob.did}"`, `"to":"${other}","to":"${bob.did}"`)),
    { status: 400, body: { error: /twice/ } },
    'a duplicate "to"',
  );
  t.match(
    await postJson(inboxUrl, text.replace('"x":null', '"x":null,"x":1')),
    { status: 400 },
    'a duplicate in the payload',
  );
  // A member the signature does not cover is refused, not dropped: what was verified is what was sent.
  const extra = { ...JSON.parse(text), unsigned: 'extra' };
  t.match(
    await postJson(inboxUrl, JSON.stringify(extra)),
    { status: 400, body: { code: 'bad_request' } },
    'an unsigned extra top-level member',
  );

  const deepText = text.replace('"x":null', `"x":${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`);
  t.match(
    await postJson(inboxUrl, deepText),
    { status: 400, body: { code: 'bad_request' } },
    'a payload nested 3,000 deep',
  );
  t.match(
    await postJson(inboxUrl, text.replace('"x":null', `"x":${'['.repeat(3_000)}${']'.repeat(3_000)}`)),
    { status: 400 },
    'arrays nested 3,000 deep',
  );
  t.equal((await fetch(`${d.meshUrl}/health`)).status, 200, 'the server still answers');

  // An agent's text with a cut emoji (a lone surrogate, which has no canonical JSON) is still signed and delivered.
  await driver.run(d, carol.id, 'msg_send', { text: 'cut \ud83d', channel: 'mesh', recipient: 'bob' });
  const row = await eventually(
    async () =>
      ((await d.request('GET', `/agents/${bob.id}/inbox`)).body.messages as any[]).find(
        (message) => message.sender === carol.did,
      ),
    "the message in Bob's inbox",
  );
  t.match(row, { text: 'cut \ufffd', data: { mesh: { signed: true } } });

  const statuses: number[] = [];
  for (let i = 0; i < 5; i++)
    statuses.push(
      (await postJson(`${d.meshUrl}/agents/carol/inbox`, signedEnvelope(testKey(), carol.did, `from sender ${i}`)))
        .status,
    );
  t.same(statuses, [202, 202, 202, 429, 429], 'five senders, one message each: the inbox takes 3 a window');
  const limited = await fetch(`${d.meshUrl}/agents/carol/inbox`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedEnvelope(testKey(), carol.did, 'again')),
  });
  t.equal(limited.status, 429);
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'with Retry-After');
  t.equal((await postJson(inboxUrl, signedEnvelope(testKey(), bob.did, 'bob has his own inbox rate'))).status, 202);
});
