import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { UnauthorizedError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';

export const TOKEN_LIFETIME_SECONDS = 86_400;

export interface IssuedToken {
  token: string;
  tokenType: 'Bearer';
  expiresIn: number;
  accountId: string;
}

/** What a valid token says: whose it is, and the account's token version it was issued under. */
export interface TokenClaims {
  accountId: string;
  tokenVersion: number;
}

/** HS256 only: the algorithm is pinned on both sides and never taken from the token. */
export class LoginTokens {
  // A key object, made once: given a string, jsonwebtoken first tries to read it as a public
  // key on every call, which cost more than the rest of a request (see test/bench).
  private readonly secret: KeyObject;

  constructor(
    secret: string,
    private readonly clock: Clock,
  ) {
    this.secret = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  issue(accountId: string, tokenVersion: number): IssuedToken {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const token = jwt.sign({ iat, ver: tokenVersion }, this.secret, {
      algorithm: 'HS256',
      subject: accountId,
      expiresIn: TOKEN_LIFETIME_SECONDS,
    });
    return { token, tokenType: 'Bearer', expiresIn: TOKEN_LIFETIME_SECONDS, accountId };
  }

  /**
   * The claims of a token this service issued; UnauthorizedError for anything else. A token
   * without `exp` would never expire, so it is refused even when its signature is right.
   * Whether its account still exists and is enabled is the Authenticator's question.
   */
  verify(token: string): TokenClaims {
    try {
      const claims = jwt.verify(token, this.secret, {
        algorithms: ['HS256'],
        clockTimestamp: Math.floor(this.clock.now().getTime() / 1000),
      });
      if (typeof claims === 'string' || typeof claims.sub !== 'string' || !claims.sub.startsWith('acc_')) {
        throw new UnauthorizedError('The token is malformed');
      }
      if (typeof claims.exp !== 'number') throw new UnauthorizedError('The token has no expiry time');
      // Tokens issued before versions existed carry none: they stand for the first version.
      const version: unknown = claims.ver ?? 0;
      if (!Number.isSafeInteger(version)) throw new UnauthorizedError('The token is malformed');
      return { accountId: claims.sub, tokenVersion: version as number };
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      if (error instanceof jwt.TokenExpiredError) throw new UnauthorizedError('The token has expired');
      throw new UnauthorizedError('The token is invalid');
    }
  }
}
