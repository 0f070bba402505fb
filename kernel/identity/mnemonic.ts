/**
 * BIP39 seed phrases (English word list) through @scure/bip39. The owner's phrase is 12 words (128 bits
 * of entropy); its seed uses the empty BIP39 passphrase, so the same phrase gives the same keys in every
 * runtime of this scheme.
 */
import { pbkdf2Sync } from 'node:crypto';
import { generateMnemonic, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/** A fresh 12-word phrase from 128 bits of CSPRNG entropy. */
export function newMnemonic(): string {
  return generateMnemonic(wordlist, 128);
}

/** Tolerates what people do when typing a phrase back: case, extra spaces, line breaks. */
export function normalizeMnemonic(phrase: string): string {
  return phrase.normalize('NFKD').trim().toLowerCase().split(/\s+/u).join(' ');
}

/** True for a valid English BIP39 phrase (word list and checksum), after normalization. */
export function isValidMnemonic(phrase: string): boolean {
  return validateMnemonic(normalizeMnemonic(phrase), wordlist);
}

/**
 * The 64-byte BIP39 seed (empty passphrase): PBKDF2-HMAC-SHA512 of the NFKD phrase, salt "mnemonic",
 * 2048 rounds, by Node's crypto (the same bytes as @scure/bip39's mnemonicToSeedSync, whose pure-JS
 * rounds took ~100 ms and left ~5 MB of the daemon's RSS behind). Call only with a phrase that passed
 * {@link isValidMnemonic}.
 */
export function seedFromMnemonic(phrase: string): Uint8Array {
  const normalized = normalizeMnemonic(phrase);
  if (![12, 15, 18, 21, 24].includes(normalized.split(' ').length)) throw new Error('Invalid mnemonic');
  const seed = pbkdf2Sync(Buffer.from(normalized, 'utf8'), Buffer.from('mnemonic', 'utf8'), 2048, 64, 'sha512');
  return new Uint8Array(seed.buffer, seed.byteOffset, seed.length);
}
