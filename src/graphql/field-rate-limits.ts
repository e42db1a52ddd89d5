import type { GraphQLResolveInfo } from 'graphql';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Dependencies } from '../deps.js';
import { RateLimitedError } from '../errors.js';
import type { RequestContext } from './context.js';

type Resolution = { args: Record<string, unknown>; context: RequestContext; info: GraphQLResolveInfo };

/** Resolves when the call may go on; throws RateLimitedError when its field's limit is reached. */
export type FieldRateLimit = (resolution: Resolution) => Promise<void>;

/** Who a field's calls count against. */
const byAccount = (context: RequestContext) =>
  context.accountId ? `account:${context.accountId}` : `address:${context.clientAddress}`;
const byAddress = (context: RequestContext) => `address:${context.clientAddress}`;

/**
 * Per-field limits, checked by the resolvers of the fields that have one and so on /graphql and
 * /v1 alike, and counted per call: 30 aliased `sendMessage` in one document are 30 calls. Each
 * call is one atomic Redis script (rate-limiter-flexible, a fixed window opened by the first
 * call), so however many calls arrive at once, through however many processes, exactly `max`
 * of a window are admitted. Over the limit: RateLimitedError (429 `rate_limited` with
 * Retry-After until the window ends). Like the budget, they count nothing while Redis is away
 * rather than refuse.
 */
export function createFieldRateLimits({
  redis,
  config,
  metrics,
}: Pick<Dependencies, 'redis' | 'config' | 'metrics'>) {
  const limiterFor = (
    field: 'sendMessage' | 'login',
    max: number,
    identify: (context: RequestContext) => string,
  ): FieldRateLimit => {
    // 0 turns a field's limit off.
    if (max === 0) return async () => undefined;
    const limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.redisPrefix}:field-rate:${field}`,
      points: max,
      duration: config.rateLimitWindowSeconds,
    });
    return async ({ context }) => {
      const caller = identify(context);
      try {
        await limiter.consume(caller);
      } catch (outcome) {
        if (outcome instanceof RateLimiterRes) {
          metrics.rateLimitRefusals.inc({
            limit: field,
            caller: caller.startsWith('account:') ? 'account' : 'address',
          });
          throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
        }
        context.logger.warn({ err: outcome, field }, 'field rate limit not counted: Redis unavailable');
      }
    };
  };
  const limits: Record<'sendMessage' | 'login', FieldRateLimit> = {
    sendMessage: limiterFor('sendMessage', config.sendMessageRateLimitMax, byAccount),
    login: limiterFor('login', config.loginRateLimitMax, byAddress),
  };
  return limits;
}

export type FieldRateLimits = ReturnType<typeof createFieldRateLimits>;
