import type { Logger } from 'pino';
import type { Dependencies } from '../deps.js';
import type { ContactImportJobs } from '../jobs/contact-import.job.js';
import { Accounts } from '../modules/accounts/accounts.js';
import { Authenticator } from '../modules/accounts/authentication.js';
import { LoginGuard } from '../modules/accounts/login-guard.js';
import { LoginTokens } from '../modules/accounts/login-tokens.js';
import { TwoFactorLogin } from '../modules/accounts/two-factor-login.js';
import { ApiKeys } from '../modules/api-keys/api-keys.js';
import { Contacts } from '../modules/contacts/contacts.js';
import { ContactImports } from '../modules/imports/contact-imports.js';
import { Uploads } from '../modules/imports/uploads.js';
import { LiveBudget } from '../modules/live/live-budget.js';
import type { LivePublisher, LivePubSub } from '../modules/live/live-events.js';
import { LiveSubscriptions } from '../modules/live/live-subscriptions.js';
import { SubscriptionSlots } from '../modules/live/subscription-slots.js';
import { RetentionSweep } from '../modules/retention/retention-sweep.js';
import { Templates } from '../modules/templates/templates.js';
import type { ModuleLogger } from './service-kit.js';

export function accountServices({ prisma, clock, config, pool, redis }: Dependencies, logger: ModuleLogger) {
  const loginTokens = new LoginTokens(config.jwtSecret, clock);
  const apiKeys = new ApiKeys({ prisma, pool, clock, logger: logger('api-keys') });
  const twoFactorLogin = new TwoFactorLogin({
    prisma,
    clock,
    sealingKey: config.twoFactorSecretKey,
    redis,
    redisPrefix: config.redisPrefix,
    logger: logger('two-factor'),
  });
  return {
    loginTokens,
    apiKeys,
    twoFactorLogin,
    authenticator: new Authenticator(pool, loginTokens, apiKeys),
    accounts: new Accounts({
      prisma,
      clock,
      tokens: loginTokens,
      guard: new LoginGuard(redis, config.redisPrefix, clock),
      twoFactor: twoFactorLogin,
      defaultAllowedCountries: config.defaultAllowedCountries,
    }),
  };
}

export function contactServices(
  { prisma, pool, clock, config }: Dependencies,
  { importJobs, live, logger }: { importJobs: ContactImportJobs; live: LivePublisher; logger: ModuleLogger },
) {
  return {
    contacts: new Contacts(prisma, clock),
    contactImports: new ContactImports({
      prisma,
      pool,
      clock,
      importJobs,
      live,
      logger: logger('imports'),
      uploads: new Uploads(pool, clock),
      importDir: config.importDir,
      limits: { maxInflatedBytes: config.importMaxInflatedBytes },
    }),
    templates: new Templates(prisma, clock),
  };
}

export function liveSubscriptionsOf(
  { redis, config }: Dependencies,
  pubSub: LivePubSub,
  logger: Logger,
): LiveSubscriptions {
  return new LiveSubscriptions({
    pubSub,
    prefix: config.redisPrefix,
    slots: new SubscriptionSlots({
      redis,
      prefix: config.redisPrefix,
      max: config.subscriptionsPerAccount,
      logger,
    }),
    budget: new LiveBudget(redis, config.redisPrefix, logger),
    logger,
  });
}

export function retentionSweepOf(
  { prisma, clock, metrics, config }: Dependencies,
  logger: Logger,
): RetentionSweep {
  return new RetentionSweep({ prisma, clock, metrics, logger, retentionDays: config.retentionDays });
}
