/**
 * BIP39 seed phrases (English word list) through @scure/bip39. The owner's phrase is 12 words (128 bits
 * of entropy); its seed uses the empty BIP39 passphrase, so the same phrase gives the same keys in every
 * runtime of this scheme.
 */
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
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

/** The 64-byte BIP39 seed (empty passphrase). Call only with a phrase that passed {@link isValidMnemonic}. */
export function seedFromMnemonic(phrase: string): Uint8Array {
  return mnemonicToSeedSync(normalizeMnemonic(phrase), '');
}
