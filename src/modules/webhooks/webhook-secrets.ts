import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { NotFoundError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';

const SEALED_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An account's signing secret: `whsec_` and 32 random bytes in base64url; the HMAC key is the whole string. */
function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * The account's signing secret. Tern must sign with it, so it cannot be stored as a hash: it is
 * sealed with AES-256-GCM under WEBHOOK_SECRET_KEY, with the account id as associated data so
 * that a sealed value copied onto another account does not open. It is issued the first time
 * anything needs it: a registration, or a delivery to a campaign URL.
 */
export class WebhookSecrets {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly key: Buffer,
  ) {}

  async current(accountId: string): Promise<string> {
    const account = await this.prisma.account.findUnique({ where: { id: accountId }, select: { webhookSecretSealed: true } });
    if (!account) throw new NotFoundError('Account');
    return this.open(accountId, account.webhookSecretSealed);
  }

  /** The secret from a sealed value already read with other data; issues one when there is none. */
  async open(accountId: string, sealed: string | null): Promise<string> {
    if (sealed) return this.unseal(accountId, sealed);
    const secret = generateSecret();
    const { count } = await this.prisma.account.updateMany({
      where: { id: accountId, webhookSecretSealed: null },
      data: { webhookSecretSealed: this.seal(accountId, secret) },
    });
    // Someone else issued it first: theirs is the account's secret.
    return count === 1 ? secret : this.current(accountId);
  }

  async rotate(accountId: string): Promise<string> {
    const secret = generateSecret();
    const { count } = await this.prisma.account.updateMany({ where: { id: accountId }, data: { webhookSecretSealed: this.seal(accountId, secret) } });
    if (count === 0) throw new NotFoundError('Account');
    return secret;
  }

  seal(accountId: string, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(accountId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  unseal(accountId: string, sealed: string): string {
    const [version, data] = sealed.split('.');
    if (version !== SEALED_VERSION || !data) throw new Error('unknown format of a sealed webhook secret');
    const bytes = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(accountId, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('a webhook signing secret does not open with WEBHOOK_SECRET_KEY (was the key changed?)');
    }
  }
}
