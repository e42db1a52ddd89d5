import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class UnsealError extends Error {}

/**
 * AES-256-GCM for secrets Tern must read back, so cannot keep as a hash (a webhook signing
 * secret, a TOTP secret). The associated data (an account id) binds a sealed value to its row:
 * copied onto another account, it does not open. Sealed form: `v1.` + base64url(iv, tag, data).
 */
export class SealedBox {
  constructor(private readonly key: Buffer) {}

  seal(associatedData: string, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** UnsealError when the value is not of this format or does not open with this key and data. */
  unseal(associatedData: string, sealed: string): string {
    const [version, data] = sealed.split('.');
    if (version !== SEALED_VERSION || !data) throw new UnsealError('unknown format of a sealed secret');
    const bytes = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new UnsealError('a sealed secret does not open with this key');
    }
  }
}
