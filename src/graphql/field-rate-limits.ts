import type { GraphQLResolveInfo } from 'graphql';
import { getFieldIdentity, getGraphQLRateLimiter, type Identity, type Store } from 'graphql-rate-limit';
import type { Redis } from 'ioredis';
import type { Dependencies } from '../deps.js';
import { RateLimitedError } from '../errors.js';
import type { RequestContext } from './context.js';

/**
 * graphql-rate-limit's store on the shared Redis, under the deployment's key prefix: each
 * identity's call timestamps as one JSON list that expires with its window. The library reads
 * the list, then writes it back: two calls at the same instant can both read the same list, so
 * a field limit may admit a few calls too many. The exact budget is the per-account one
 * (src/http/rate-limit.ts); these limits only keep one field from spending all of it.
 */
class RedisTimestampStore implements Store {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(identity: Identity): string {
    return `${this.prefix}:field-rate:${identity.contextIdentity}:${identity.fieldIdentity}`;
  }

  async setForIdentity(identity: Identity, timestamps: readonly number[], windowMs?: number): Promise<void> {
    if (timestamps.length === 0) {
      await this.redis.del(this.key(identity));
      return;
    }
    const newest = Math.max(...timestamps);
    await this.redis.set(this.key(identity), JSON.stringify(timestamps), 'PX', Math.max(1, newest + (windowMs ?? 0) - Date.now()));
  }

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const stored = await this.redis.get(this.key(identity));
    return stored ? (JSON.parse(stored) as number[]) : [];
  }
}

interface FieldLimit {
  max: number;
  windowSeconds: number;
}

type Resolution = { args: Record<string, unknown>; context: RequestContext; info: GraphQLResolveInfo };

/** Who a field's calls count against. */
const byAccount = (context: RequestContext) => (context.accountId ? `account:${context.accountId}` : `address:${context.clientAddress}`);
const byAddress = (context: RequestContext) => `address:${context.clientAddress}`;

type FieldRateLimiter = (resolution: Resolution, limit: FieldLimit) => Promise<void>;

/** Resolves when the call may go on; throws RateLimitedError when its field's limit is reached. */
export type FieldRateLimit = (resolution: Resolution) => Promise<void>;

/**
 * Per-field limits (graphql-rate-limit), checked by the resolvers of the fields that have one
 * and so on /graphql and /v1 alike. Over the limit: RateLimitedError (429 `rate_limited` with
 * Retry-After). Like the budget, they count nothing while Redis is away rather than refuse.
 */
export function createFieldRateLimits({ redis, config, logger, metrics }: Pick<Dependencies, 'redis' | 'config' | 'logger' | 'metrics'>) {
  const store = new RedisTimestampStore(redis, config.redisPrefix);
  const windowSeconds = config.rateLimitWindowSeconds;
  const limiterFor = (identify: (context: RequestContext) => string): FieldRateLimiter => {
    const limiter = getGraphQLRateLimiter({ identifyContext: identify, store });
    return async ({ args, context, info }, { max, windowSeconds }) => {
      // 0 turns a field's limit off: its store keeps every call of the window, which at a
      // high limit costs more than the limit is worth.
      if (max === 0) return;
      let refusal: string | undefined;
      try {
        // A refused call is not counted, so a slot frees when the oldest counted call leaves the window.
        refusal = await limiter({ parent: null, args, context, info }, { max, window: `${windowSeconds}s`, uncountRejected: true });
      } catch (error) {
        logger.warn({ err: error, field: info.fieldName }, 'field rate limit not counted: Redis unavailable');
        return;
      }
      if (refusal === undefined) return;
      const windowMs = windowSeconds * 1000;
      const identity = { contextIdentity: identify(context), fieldIdentity: getFieldIdentity(info.fieldName, [], args) };
      const inWindow = (await store.getForIdentity(identity).catch(() => [])).filter((at) => at + windowMs > Date.now());
      const oldest = inWindow.length > 0 ? Math.min(...inWindow) : Date.now();
      metrics.rateLimitRefusals.inc({ limit: info.fieldName, caller: identity.contextIdentity.startsWith('account:') ? 'account' : 'address' });
      throw new RateLimitedError(Math.max(1, Math.ceil((oldest + windowMs - Date.now()) / 1000)));
    };
  };
  const perAccount = limiterFor(byAccount);
  const perAddress = limiterFor(byAddress);
  const limits: Record<'sendMessage' | 'login', FieldRateLimit> = {
    sendMessage: (resolution) => perAccount(resolution, { max: config.sendMessageRateLimitMax, windowSeconds }),
    login: (resolution) => perAddress(resolution, { max: config.loginRateLimitMax, windowSeconds }),
  };
  return limits;
}

export type FieldRateLimits = ReturnType<typeof createFieldRateLimits>;
