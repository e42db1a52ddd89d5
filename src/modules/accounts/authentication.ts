import type pg from 'pg';
import { UnauthorizedError } from '../../errors.js';
import { Batcher } from '../../lib/batcher.js';
import { isApiKeyLike } from '../api-keys/api-key-secret.js';
import type { ApiKeys } from '../api-keys/api-keys.js';
import type { LoginTokens, TokenClaims } from './login-tokens.js';

/** What a caller presented: a login token (from /v1/auth/login) or an API key. */
export type Credential = 'login_token' | 'api_key';

export interface Caller {
  accountId: string;
  credential: Credential;
}

/**
 * A bearer credential as far as it can be read without PostgreSQL: a login token whose
 * signature and expiry hold, or something shaped like an API key. Only a lookup confirms it.
 */
export type PresentedCredential =
  | { kind: 'login_token'; claims: TokenClaims }
  | { kind: 'api_key'; key: string };

interface AccountState {
  id: string;
  disabled_at: Date | null;
  token_version: number;
}

const BATCHING = { maxBatch: 100, maxInFlight: 2 };

/**
 * Who is calling, from `Authorization: Bearer <login token or API key>`. The account is read
 * on every request (one indexed row, and concurrent requests share one statement), so that a
 * deleted or disabled account, a password reset or a revoked key take effect at once in every
 * process: there is no cache to outlive them.
 */
export class Authenticator {
  private readonly accounts = new Batcher((ids: string[]) => this.findAccounts(ids), BATCHING);
  /**
   * Checks on their way, by header: callers presenting the same credential at the same moment
   * (an account's live streams, each re-checked when one event reaches them all) share one.
   */
  private readonly checking = new Map<string, Promise<Caller | null>>();

  constructor(
    // pg rather than Prisma: on every request, Prisma's per-query cost was twice the statement's.
    private readonly pool: pg.Pool,
    private readonly tokens: LoginTokens,
    private readonly apiKeys: ApiKeys,
  ) {}

  /** null when the header is absent; UnauthorizedError, saying why, for anything but a valid credential. */
  fromHeader(header: string | undefined): Promise<Caller | null> {
    if (header === undefined) return Promise.resolve(null);
    const known = this.checking.get(header);
    if (known) return known;
    const checked = this.check(header).finally(() => this.checking.delete(header));
    this.checking.set(header, checked);
    return checked;
  }

  private async check(header: string): Promise<Caller | null> {
    const presented = this.read(header);
    return presented && this.confirm(presented);
  }

  /**
   * The credential of the header, read without PostgreSQL: null when there is no header,
   * UnauthorizedError for a header or login token that no lookup could make valid.
   */
  read(header: string | undefined): PresentedCredential | null {
    if (header === undefined) return null;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      throw new UnauthorizedError('The Authorization header must be "Bearer <token or API key>"');
    const credential = match[1];
    if (isApiKeyLike(credential)) return { kind: 'api_key', key: credential };
    return { kind: 'login_token', claims: this.tokens.verify(credential) };
  }

  /**
   * The account a credential claims, when that is known without a lookup: a login token's
   * subject (its signature holds), or the account this process last found an API key valid for.
   * null when only a lookup can tell (an API key this process has not found valid).
   */
  knownAccount(presented: PresentedCredential): string | null {
    return presented.kind === 'login_token'
      ? presented.claims.accountId
      : this.apiKeys.accountKnownFor(presented.key);
  }

  /** The caller of a credential, looked up in PostgreSQL; UnauthorizedError, saying why, unless it is valid now. */
  async confirm(presented: PresentedCredential): Promise<Caller> {
    if (presented.kind === 'api_key')
      return { accountId: await this.apiKeys.authenticate(presented.key), credential: 'api_key' };
    const { claims } = presented;
    const account = await this.accounts.add(claims.accountId);
    if (!account) throw new UnauthorizedError('The account of this token no longer exists');
    if (account.disabled_at) throw new UnauthorizedError('The account of this token is disabled');
    if (account.token_version !== claims.tokenVersion)
      throw new UnauthorizedError('The token was ended by a password reset: log in again');
    return { accountId: account.id, credential: 'login_token' };
  }

  private async findAccounts(ids: string[]): Promise<(AccountState | null)[]> {
    const { rows } = await this.pool.query<AccountState>({
      text: 'SELECT id, disabled_at, token_version FROM accounts WHERE id = ANY($1::text[])',
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
