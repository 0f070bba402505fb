/**
 * The pure helpers of `contracts/agent-keys.ts` (the kernel's did:key code too): a known DID vector,
 * round trips, verification of real (tweetnacl) signatures only, canonical JSON independent of key order.
 */
import t from 'tap';
import nacl from 'tweetnacl';
import {
  canonicalJson,
  didFromPublicKey,
  formatSignature,
  isEd25519Did,
  parseSignature,
  publicKeyFromDid,
  verifyDidSignature,
} from '../contracts/agent-keys.js';

t.test('did:key: a known vector and round trips', async (t) => {
  // RFC 8032's first test key, encoded independently (multicodec 0xed01 + key, base58btc).
  const rfcKey = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
  t.equal(didFromPublicKey(rfcKey), 'did:key:z6MktwupdmLXVVqTzCw4i46r4uGyosGXRnR3XjN4Zq7oMMsw');
  for (let i = 0; i < 50; i++) {
    const pair = nacl.sign.keyPair();
    const did = didFromPublicKey(pair.publicKey);
    t.match(did, /^did:key:z6Mk/);
    t.same(Buffer.from(publicKeyFromDid(did)), Buffer.from(pair.publicKey));
  }
  t.ok(didFromPublicKey(new Uint8Array(32)).startsWith('did:key:z6Mk'), 'leading zero bytes');
  t.same(Buffer.from(publicKeyFromDid(didFromPublicKey(new Uint8Array(32)))), Buffer.alloc(32));
  for (const bad of ['did:key:zNOT', 'did:web:example.com', 'did:key:z6Mk0OIl', '', `did:key:z${'1'.repeat(200)}`])
    t.notOk(isEd25519Did(bad), bad);
});

t.test('signatures verify for the right key and bytes only', async (t) => {
  const pair = nacl.sign.keyPair();
  const other = nacl.sign.keyPair();
  const did = didFromPublicKey(pair.publicKey);
  const message = Buffer.from(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] }));
  t.equal(message.toString(), '{"a":[1,{"d":2}],"b":1}');
  const signature = nacl.sign.detached(message, pair.secretKey);
  t.ok(verifyDidSignature(did, message, signature));
  t.notOk(verifyDidSignature(did, Buffer.from('{"a":[1,{"d":2}],"b":2}'), signature), 'other bytes');
  t.notOk(verifyDidSignature(did, message, nacl.sign.detached(message, other.secretKey)), 'other key');
  t.notOk(verifyDidSignature('did:key:zbad', message, signature), 'bad DID');
  t.notOk(verifyDidSignature(did, message, signature.slice(0, 63)), 'short signature');
  t.same(parseSignature(formatSignature(signature)), signature);
  for (const bad of ['ed25519:AAAA', 'rsa:xyz', 42, undefined]) t.equal(parseSignature(bad), undefined);
});
