import { hkdfSync } from 'node:crypto';
import { ConfigError, type Environment } from './environment.js';

const DEVELOPMENT_JWT_SECRET = 'tern-development-only-secret-do-not-use-in-production';
// Fixed, so that secrets sealed by one development run can be opened by the next.
const DEVELOPMENT_WEBHOOK_SECRET_KEY = Buffer.from('tern-development-webhook-key-32b', 'utf8');

export interface Secrets {
  jwtSecret: string;
  webhookSecretKey: Buffer;
  twoFactorSecretKey: Buffer;
  carrierSecretKey: Buffer;
  /** HMAC-SHA-256 key of verification codes (only their HMAC is stored). */
  verificationCodeKey: Buffer;
  /** AES-256-GCM key that seals a message's text for the carrier when the stored one is masked. */
  messageTextKey: Buffer;
}

/**
 * The token signing secret and the sealing keys: required in production, development keys
 * (with a warning) elsewhere, so that `npm start` works on a fresh clone.
 */
export function secretsFrom(env: Environment, warnings: string[]): Secrets {
  const production = env.NODE_ENV === 'production';
  let jwtSecret = env.JWT_SECRET;
  if (production && (!jwtSecret || Buffer.byteLength(jwtSecret) < 32)) {
    throw new ConfigError(
      'invalid configuration: JWT_SECRET is required in production and must be at least 32 bytes',
    );
  }
  if (!jwtSecret) {
    jwtSecret = DEVELOPMENT_JWT_SECRET;
    warnings.push('JWT_SECRET is not set: using a development key; tokens will not survive a change of key');
  }

  let webhookSecretKey = env.WEBHOOK_SECRET_KEY ? parseKey(env.WEBHOOK_SECRET_KEY) : null;
  if (env.WEBHOOK_SECRET_KEY && !webhookSecretKey) {
    throw new ConfigError(
      'invalid configuration: WEBHOOK_SECRET_KEY must be 32 bytes, as 64 hex digits or in base64',
    );
  }
  if (production && !webhookSecretKey) {
    throw new ConfigError(
      'invalid configuration: WEBHOOK_SECRET_KEY is required in production (32 bytes, as 64 hex digits or in base64)',
    );
  }
  if (!webhookSecretKey) {
    webhookSecretKey = DEVELOPMENT_WEBHOOK_SECRET_KEY;
    warnings.push('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are sealed with a development key');
  }

  const twoFactorSecretKey = env.TWO_FACTOR_SECRET_KEY
    ? parseKey(env.TWO_FACTOR_SECRET_KEY)
    : derivedKey(webhookSecretKey, 'tern two-factor secrets');
  if (!twoFactorSecretKey) {
    throw new ConfigError(
      'invalid configuration: TWO_FACTOR_SECRET_KEY must be 32 bytes, as 64 hex digits or in base64',
    );
  }
  const carrierSecretKey = derivedKey(webhookSecretKey, 'tern carrier passwords');
  return {
    jwtSecret,
    webhookSecretKey,
    twoFactorSecretKey,
    carrierSecretKey,
    verificationCodeKey: derivedKey(webhookSecretKey, 'tern verification codes'),
    messageTextKey: derivedKey(webhookSecretKey, 'tern sealed message texts'),
  };
}

/** A 32-byte key written as 64 hex digits or in base64 (either alphabet); null otherwise. */
function parseKey(text: string): Buffer | null {
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text, 'base64')
      : null;
  return key?.length === 32 ? key : null;
}

/**
 * A key of its own for another purpose, from a configured one (HKDF-SHA-256): a deployment that
 * sets WEBHOOK_SECRET_KEY (required in production) gets a TOTP sealing key without a new
 * required setting, and neither key's ciphertexts open with the other.
 */
function derivedKey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), purpose, 32));
}
