/**
 * kernel/identity/nacl-node.ts does tweetnacl's X25519 and Ed25519 with Node's crypto: every result must
 * be tweetnacl's, byte for byte, so boxes and signatures made before the change still open and verify
 * and new ones are what tweetnacl would have made. Checked on fixed vectors made by tweetnacl (stored
 * data of the old code), on random inputs against tweetnacl itself, and on the edge cases where OpenSSL
 * and tweetnacl could differ (public keys with the top bit set, low-order points).
 */
import t from 'tap';
import nacl from 'tweetnacl';
import {
  box,
  boxBefore,
  boxKeyPair,
  boxKeyPairFromSecret,
  boxOpen,
  ed25519Signer,
  signDetached,
  signKeyPairFromSeed,
  x25519PublicKey,
} from '../kernel/identity/nacl-node.js';
import { openSealed, sealTo } from '../kernel/identity/sealed-box.js';
import { openWithKey, sealWithKey } from '../kernel/credentials/envelope.js';

const b64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
const same = (a: Uint8Array | null, b: Uint8Array | null) =>
  a !== null && b !== null && Buffer.from(a).equals(Buffer.from(b));

// Made with tweetnacl 1.0.3 alone (the code before this change): a box sealed to a runtime key, as in
// an envelope's runtime wrap, and an Ed25519 signature.
const VECTOR = {
  runtimeSecret: 'AQgPFh0kKzI5QEdOVVxjanF4f4aNlJuiqbC3vsXM09o=',
  runtimePublic: 'yP7Kgb4ZbN8sreq/E8SQPXYy3OSVWqaLbl2a3vVOJhY=',
  sealed: {
    epk: 'c+eZcckRAClyNjKoC3B79PYsEldjNG4ehxjWwNzDqjo=',
    nonce: 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYX',
    ct: 'WmcKrS8aLNT/7yY03rWGC9x5UToG3fQRQM3X/YAY83ZbowolQSokyMzZ5sFJDLRn',
  },
  kw: 'AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dw=',
  seed: 'BAsSGSAnLjU8Q0pRWF9mbXR7gomQl56lrLO6wcjP1t0=',
  signPublic: '/BoaWiGjTFi0RttfapDqSNXYzcwlBgEvSlE6bGf/XY8=',
  message: 'agt attestation v1|did:key:z6Mk...|agt-1234',
  signature: 'ibXy+P7dNasYneyIMpCi9iVFg+DSeFKfirfWTM5LjqvpUDae+o1D07tvD3Z98lKxR3LptUCKO7w9gZvbk6aSDA==',
};

t.test(
  'data made by tweetnacl before the change: the box opens, the keys and the signature are the same bytes',
  async (t) => {
    const runtime = boxKeyPairFromSecret(b64(VECTOR.runtimeSecret));
    t.ok(same(runtime.publicKey, b64(VECTOR.runtimePublic)), 'X25519 public key');
    t.ok(same(openSealed(VECTOR.sealed, runtime.secretKey), b64(VECTOR.kw)), 'the sealed wrap key opens');
    t.equal(openSealed(VECTOR.sealed, boxKeyPair().secretKey), null, 'and not with another key');
    const pair = signKeyPairFromSeed(b64(VECTOR.seed));
    t.ok(same(pair.publicKey, b64(VECTOR.signPublic)), 'Ed25519 public key');
    t.ok(
      same(pair.secretKey, nacl.sign.keyPair.fromSeed(b64(VECTOR.seed)).secretKey),
      "tweetnacl's 64-byte secret key layout",
    );
    t.ok(
      same(signDetached(new TextEncoder().encode(VECTOR.message), pair.secretKey), b64(VECTOR.signature)),
      'the signature',
    );
  },
);

t.test('random inputs: every function answers what tweetnacl answers', async (t) => {
  let checked = 0;
  for (let i = 0; i < 64; i++) {
    const secret = nacl.randomBytes(32);
    const seed = nacl.randomBytes(32);
    const message = nacl.randomBytes(i * 7);
    const nonce = nacl.randomBytes(24);
    const peer = nacl.box.keyPair();
    if (!same(x25519PublicKey(secret), nacl.box.keyPair.fromSecretKey(secret).publicKey))
      t.fail(`x25519 public key ${i}`);
    const pair = nacl.sign.keyPair.fromSeed(seed);
    const ours = signKeyPairFromSeed(seed);
    if (!same(ours.publicKey, pair.publicKey) || !same(ours.secretKey, pair.secretKey)) t.fail(`ed25519 key pair ${i}`);
    if (!same(signDetached(message, pair.secretKey), nacl.sign.detached(message, pair.secretKey)))
      t.fail(`signature ${i}`);
    if (!same(boxBefore(peer.publicKey, secret), nacl.box.before(peer.publicKey, secret))) t.fail(`box.before ${i}`);
    const sealed = box(message, nonce, peer.publicKey, secret);
    if (!same(sealed, nacl.box(message, nonce, peer.publicKey, secret))) t.fail(`box ${i}`);
    const senderPublic = nacl.box.keyPair.fromSecretKey(secret).publicKey;
    if (!same(nacl.box.open(sealed, nonce, senderPublic, peer.secretKey), message)) t.fail(`tweetnacl opens ours ${i}`);
    const theirs = nacl.box(message, nonce, senderPublic, peer.secretKey);
    if (!same(boxOpen(theirs, nonce, senderPublic, peer.secretKey), message)) t.fail(`we open tweetnacl's ${i}`);
    // Public keys with the top bit set (X25519 ignores it in both) and arbitrary 32-byte "keys".
    const odd = nacl.randomBytes(32);
    odd[31]! |= 0x80;
    if (!same(boxBefore(odd, secret), nacl.box.before(odd, secret))) t.fail(`box.before with the top bit set ${i}`);
    checked++;
  }
  t.equal(checked, 64);
});

t.test(
  'low-order public keys: OpenSSL refuses the all-zero shared secret, the fallback answers as tweetnacl',
  async (t) => {
    const secret = nacl.randomBytes(32);
    const nonce = nacl.randomBytes(24);
    const message = new TextEncoder().encode('hello');
    const lowOrder = [
      new Uint8Array(32),
      Uint8Array.from([1, ...new Array(31).fill(0)]),
      (() => {
        const p = new Uint8Array(32).fill(0xff);
        p[0] = 0xec;
        p[31] = 0x7f;
        return p; // p - 1
      })(),
    ];
    for (const [i, point] of lowOrder.entries()) {
      t.ok(same(boxBefore(point, secret), nacl.box.before(point, secret)), `box.before ${i}`);
      const sealed = box(message, nonce, point, secret);
      t.ok(same(sealed, nacl.box(message, nonce, point, secret)), `box ${i}`);
      t.ok(same(boxOpen(sealed, nonce, point, secret), nacl.box.open(sealed, nonce, point, secret)), `box.open ${i}`);
    }
  },
);

t.test('sealTo/openSealed and secretbox values interoperate with plain tweetnacl both ways', async (t) => {
  const recipient = nacl.box.keyPair();
  const plaintext = nacl.randomBytes(32);
  const ours = sealTo(recipient.publicKey, plaintext);
  t.ok(
    same(nacl.box.open(b64(ours.ct), b64(ours.nonce), b64(ours.epk), recipient.secretKey), plaintext),
    'tweetnacl opens a box sealed now',
  );
  const ephemeral = nacl.box.keyPair();
  const nonce = nacl.randomBytes(24);
  const old = {
    epk: Buffer.from(ephemeral.publicKey).toString('base64'),
    nonce: Buffer.from(nonce).toString('base64'),
    ct: Buffer.from(nacl.box(plaintext, nonce, recipient.publicKey, ephemeral.secretKey)).toString('base64'),
  };
  t.ok(same(openSealed(old, recipient.secretKey), plaintext), 'a box sealed by tweetnacl opens now');
  const key = nacl.randomBytes(32);
  t.ok(same(openWithKey(key, sealWithKey(key, plaintext)), plaintext));
  t.throws(() => boxKeyPairFromSecret(new Uint8Array(31)), RangeError);
  t.throws(() => signDetached(plaintext, new Uint8Array(32)), RangeError);
});

t.test('a secret key whose second half is not its public key is signed as tweetnacl signs it', async (t) => {
  const pair = nacl.sign.keyPair.fromSeed(nacl.randomBytes(32));
  const odd = pair.secretKey.slice();
  odd.set(nacl.randomBytes(32), 32);
  const message = new TextEncoder().encode('odd');
  t.ok(same(signDetached(message, odd), nacl.sign.detached(message, odd)));
});

t.test('BIP39 seeds by node:crypto are @scure/bip39 seeds', async (t) => {
  const { mnemonicToSeedSync, generateMnemonic } = await import('@scure/bip39');
  const { wordlist } = await import('@scure/bip39/wordlists/english.js');
  const { seedFromMnemonic } = await import('../kernel/identity/mnemonic.js');
  // The BIP39 reference vector (empty passphrase): "abandon ... about".
  const known = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
  t.equal(
    Buffer.from(seedFromMnemonic(known)).toString('hex'),
    '5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4',
  );
  t.ok(
    same(seedFromMnemonic(`  ${known.toUpperCase().replace(/ /g, '\n ')} `), mnemonicToSeedSync(known, '')),
    'normalized as before',
  );
  for (let i = 0; i < 8; i++) {
    const phrase = generateMnemonic(wordlist, i % 2 ? 256 : 128);
    if (!same(seedFromMnemonic(phrase), mnemonicToSeedSync(phrase, ''))) t.fail(`seed ${i}`);
  }
  t.throws(() => seedFromMnemonic('abandon about'));
});

t.test('prepared signers and the recipient key cache answer as tweetnacl', async (t) => {
  // A signer made once signs every message as tweetnacl does, the odd key (tweetnacl's fallback) too.
  const pair = nacl.sign.keyPair.fromSeed(nacl.randomBytes(32));
  const odd = pair.secretKey.slice();
  odd.set(nacl.randomBytes(32), 32);
  const sign = ed25519Signer(pair.secretKey);
  const signOdd = ed25519Signer(odd);
  for (let i = 0; i < 5; i++) {
    const message = nacl.randomBytes(1 + i * 40);
    if (!same(sign(message), nacl.sign.detached(message, pair.secretKey))) t.fail(`signer ${i}`);
    if (!same(signOdd(message), nacl.sign.detached(message, odd))) t.fail(`odd signer ${i}`);
  }
  t.throws(() => ed25519Signer(new Uint8Array(32)), RangeError);
  // More recipients than the cache holds, each sealed to twice: every box opens for its recipient only.
  const recipients = Array.from({ length: 12 }, () => nacl.box.keyPair());
  const plaintext = nacl.randomBytes(32);
  for (const round of [0, 1]) {
    for (const [i, recipient] of recipients.entries()) {
      const sealed = sealTo(recipient.publicKey, plaintext);
      if (!same(openSealed(sealed, recipient.secretKey), plaintext)) t.fail(`recipient ${i} round ${round}`);
      if (openSealed(sealed, recipients[(i + 1) % recipients.length]!.secretKey) !== null)
        t.fail(`another key opened ${i}`);
    }
  }
  // Sealed to a low-order point: OpenSSL refuses, tweetnacl's box is made (the all-zero shared secret).
  const zero = new Uint8Array(32);
  const sealed = sealTo(zero, plaintext);
  const key = nacl.box.before(zero, nacl.randomBytes(32));
  t.ok(
    same(nacl.secretbox.open(b64(sealed.ct), b64(sealed.nonce), key), plaintext),
    'a low-order recipient gets the box tweetnacl makes',
  );
  t.pass('checked');
});
