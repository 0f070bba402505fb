/**
 * Owner identity crypto: SLIP-0010 against the official Ed25519 test vector 1, the pinned DID of a
 * known mnemonic (cross-checked by an independent node:crypto computation), did:key round trips and
 * sealed boxes.
 */
import { createHmac, createPrivateKey, createPublicKey, pbkdf2Sync } from 'node:crypto';
import t from 'tap';
import nacl from 'tweetnacl';
import { didKeyFromEd25519, ed25519FromDidKey, verifyWithDid } from '../kernel/identity/did-key.js';
import { isValidMnemonic, newMnemonic, seedFromMnemonic } from '../kernel/identity/mnemonic.js';
import { deriveOwnerKeys } from '../kernel/identity/owner-keys.js';
import { openSealed, sealTo } from '../kernel/identity/sealed-box.js';
import { derivePath, masterNode, parsePath } from '../kernel/identity/slip10.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const KNOWN_PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** Computed once with this implementation and confirmed by the independent computation below. */
const KNOWN_OWNER_DID = 'did:key:z6Mkg8Z7cTsSo5m83tXmY93GiVPBFR2fePK84cdj2nC7AjoU';

t.test('SLIP-0010 Ed25519 test vector 1', async (t) => {
  const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const master = masterNode(seed);
  t.equal(hex(master.chainCode), '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb');
  t.equal(hex(master.key), '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7');
  t.equal(
    hex(nacl.sign.keyPair.fromSeed(master.key).publicKey),
    'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed',
  );

  const vectors: Array<[string, string, string, string]> = [
    [
      "m/0'",
      '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69',
      '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3',
      '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c',
    ],
    [
      "m/0'/1'",
      'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14',
      'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2',
      '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187',
    ],
    [
      "m/0'/1'/2'/2'/1000000000'",
      '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230',
      '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793',
      '3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a',
    ],
  ];
  for (const [path, chainCode, privateKey, publicKey] of vectors) {
    const node = derivePath(seed, path);
    t.equal(hex(node.chainCode), chainCode, `${path} chain code`);
    t.equal(hex(node.key), privateKey, `${path} private key`);
    t.equal(hex(nacl.sign.keyPair.fromSeed(node.key).publicKey), publicKey, `${path} public key`);
  }
  t.throws(() => parsePath("m/44'/0/0'"), /hardened/, 'non-hardened segments are refused');
  t.throws(() => parsePath("44'/0'"), /must start/);
});

/** An independent implementation with node:crypto only: BIP39 seed, SLIP-0010, Ed25519, base58btc. */
function independentDid(phrase: string): string {
  const seed = pbkdf2Sync(Buffer.from(phrase.normalize('NFKD')), Buffer.from('mnemonic'), 2048, 64, 'sha512');
  let digest = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const index of [44, 0, 0]) {
    const data = Buffer.alloc(37);
    digest.subarray(0, 32).copy(data, 1);
    data.writeUInt32BE((index | 0x80000000) >>> 0, 33);
    digest = createHmac('sha512', digest.subarray(32)).update(data).digest();
  }
  // PKCS#8 wrapper of a raw Ed25519 private key (RFC 8410).
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), digest.subarray(0, 32)]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({
    format: 'der',
    type: 'spki',
  });
  const publicKey = spki.subarray(spki.length - 32);
  const bytes = Buffer.concat([Buffer.from([0xed, 0x01]), publicKey]);
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (value > 0n) {
    out = alphabet[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return `did:key:z${out}`;
}

t.test('a known mnemonic yields the pinned owner DID', async (t) => {
  t.ok(isValidMnemonic(KNOWN_PHRASE));
  const keys = deriveOwnerKeys(seedFromMnemonic(KNOWN_PHRASE));
  t.equal(keys.did, KNOWN_OWNER_DID);
  t.equal(independentDid(KNOWN_PHRASE), KNOWN_OWNER_DID, 'independent node:crypto derivation agrees');
  t.match(keys.did, /^did:key:z6Mk/);
  // Sloppy typing of the same phrase gives the same identity.
  t.equal(
    deriveOwnerKeys(seedFromMnemonic(`  ${KNOWN_PHRASE.toUpperCase().replace(/ /g, '\n ')} `)).did,
    KNOWN_OWNER_DID,
  );
  // The encryption key is a different key from another path.
  t.not(hex(keys.box.publicKey), hex(keys.signing.publicKey));
  t.equal(hex(keys.box.publicKey), '480c8152a672a83eb3d3cedbdd07c477af8b53690aad583e88ec2e9ffbb8bb50');
});

t.test('new mnemonics are 12 valid words and differ', async (t) => {
  const a = newMnemonic();
  const b = newMnemonic();
  t.equal(a.split(' ').length, 12);
  t.ok(isValidMnemonic(a));
  t.not(a, b);
  t.notOk(
    isValidMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon'),
    'bad checksum',
  );
  t.notOk(isValidMnemonic('hello world'));
});

t.test('did:key round trip and signature verification', async (t) => {
  const pair = nacl.sign.keyPair();
  const did = didKeyFromEd25519(pair.publicKey);
  t.same(ed25519FromDidKey(did), pair.publicKey);
  const message = new TextEncoder().encode('attest');
  const signature = nacl.sign.detached(message, pair.secretKey);
  t.ok(verifyWithDid(did, message, signature));
  t.notOk(verifyWithDid(did, new TextEncoder().encode('other'), signature));
  t.notOk(verifyWithDid('did:key:zNotBase58!', message, signature));
  t.throws(() => ed25519FromDidKey('did:web:example.com'));
});

t.test('sealed boxes open only with the recipient key', async (t) => {
  const recipient = nacl.box.keyPair();
  const other = nacl.box.keyPair();
  const dataKey = nacl.randomBytes(32);
  const sealed = sealTo(recipient.publicKey, dataKey);
  t.same(openSealed(sealed, recipient.secretKey), dataKey);
  t.equal(openSealed(sealed, other.secretKey), null);
  t.equal(openSealed({ ...sealed, ct: 'AAAA' }, recipient.secretKey), null, 'malformed box');
  t.equal(JSON.parse(JSON.stringify(sealed)).epk, sealed.epk, 'JSON-ready');
});
