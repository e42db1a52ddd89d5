import { createHash } from 'node:crypto';
import { customAlphabet } from 'nanoid';

export const API_KEY_PREFIX = 'tern_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 40 characters of 62 are 238 random bits: no key can be guessed, and no hash reversed.
const RANDOM_CHARACTERS = 40;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARACTERS}}$`);
/** What lists show of a key to tell keys apart: the prefix and its first random characters. */
const SHOWN_CHARACTERS = API_KEY_PREFIX.length + 6;

const randomCharacters = customAlphabet(BASE62, RANDOM_CHARACTERS);

export interface NewApiKeySecret {
  /** Shown to its owner once, never stored. */
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKeySecret(): NewApiKeySecret {
  const key = `${API_KEY_PREFIX}${randomCharacters()}`;
  return { key, prefix: key.slice(0, SHOWN_CHARACTERS), hash: hashApiKey(key) };
}

/**
 * Plain SHA-256, not a password hash: a key has 238 random bits, so no amount of hashing power
 * can search its space, and a slow hash (scrypt, argon2) would cost every request that
 * presents a key. Being deterministic, the hash is also what the key is looked up by.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('base64url');
}

/** A bearer credential meant as an API key (rather than a login token). */
export function isApiKeyLike(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}

export function isWellFormedApiKey(credential: string): boolean {
  return API_KEY_PATTERN.test(credential);
}
