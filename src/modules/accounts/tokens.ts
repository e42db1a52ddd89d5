import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Clock } from '../../clock.js';
import { UnauthorizedError } from '../../errors.js';

export const TOKEN_LIFETIME_SECONDS = 86_400;

export interface IssuedToken {
  token: string;
  tokenType: 'Bearer';
  expiresIn: number;
  accountId: string;
}

/** HS256 only: the algorithm is pinned on both sides and never taken from the token. */
export class TokenService {
  // A key object, made once: given a string, jsonwebtoken first tries to read it as a public
  // key on every call, which cost more than the rest of a request (see test/bench).
  private readonly secret: KeyObject;

  constructor(
    secret: string,
    private readonly clock: Clock,
  ) {
    this.secret = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  issue(accountId: string): IssuedToken {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const token = jwt.sign({ iat }, this.secret, {
      algorithm: 'HS256',
      subject: accountId,
      expiresIn: TOKEN_LIFETIME_SECONDS,
    });
    return { token, tokenType: 'Bearer', expiresIn: TOKEN_LIFETIME_SECONDS, accountId };
  }

  /** The account id a token was issued to; UnauthorizedError for anything else. */
  verify(token: string): string {
    try {
      const claims = jwt.verify(token, this.secret, {
        algorithms: ['HS256'],
        clockTimestamp: Math.floor(this.clock.now().getTime() / 1000),
      });
      if (typeof claims === 'string' || typeof claims.sub !== 'string' || !claims.sub.startsWith('acc_')) {
        throw new UnauthorizedError('The token is malformed');
      }
      return claims.sub;
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      if (error instanceof jwt.TokenExpiredError) throw new UnauthorizedError('The token has expired');
      throw new UnauthorizedError('The token is invalid');
    }
  }

  /** Reads `Authorization: Bearer <token>`; null when the header is absent. */
  accountFromHeader(header: string | undefined): string | null {
    if (header === undefined) return null;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new UnauthorizedError('The Authorization header must be "Bearer <token>"');
    return this.verify(match[1]);
  }
}
