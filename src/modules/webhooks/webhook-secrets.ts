import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { SealedBox, UnsealError } from '../../lib/sealed-box.js';

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
  private readonly box: SealedBox;

  constructor(
    private readonly prisma: PrismaClient,
    key: Buffer,
  ) {
    this.box = new SealedBox(key);
  }

  async current(accountId: string): Promise<string> {
    const account = await this.prisma.account.findUnique({
      where: { id: accountId },
      select: { webhookSecretSealed: true },
    });
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
    const { count } = await this.prisma.account.updateMany({
      where: { id: accountId },
      data: { webhookSecretSealed: this.seal(accountId, secret) },
    });
    if (count === 0) throw new NotFoundError('Account');
    return secret;
  }

  seal(accountId: string, secret: string): string {
    return this.box.seal(accountId, secret);
  }

  unseal(accountId: string, sealed: string): string {
    try {
      return this.box.unseal(accountId, sealed);
    } catch (error) {
      if (!(error instanceof UnsealError)) throw error;
      throw new Error(
        `a webhook signing secret does not open with WEBHOOK_SECRET_KEY (was the key changed?): ${error.message}`,
      );
    }
  }
}
