import type { Logger } from 'pino';
import { CarrierCatalog } from './carriers/carrier-catalog.js';

import { CarrierCallbacks, carrierDefaultSender } from './carriers/index.js';
import { CarrierDirectory } from './carriers/routing/carrier-directory.js';
import { CarrierHealthBoard } from './carriers/routing/carrier-health.js';
import type { Dependencies } from './deps.js';
import { CampaignDispatchJobs } from './jobs/campaign-dispatch.job.js';
import { ContactImportJobs } from './jobs/contact-import.job.js';
import { MessageSendJobs } from './jobs/message-send.job.js';
import { WebhookDeliveryJobs } from './jobs/webhook-delivery.job.js';
import { SealedBox } from './lib/sealed-box.js';
import { Accounts } from './modules/accounts/accounts.js';
import { Authenticator } from './modules/accounts/authentication.js';
import { LoginGuard } from './modules/accounts/login-guard.js';
import { LoginTokens } from './modules/accounts/login-tokens.js';
import { TwoFactorLogin } from './modules/accounts/two-factor-login.js';
import { ApiKeys } from './modules/api-keys/api-keys.js';
import { CampaignDispatch } from './modules/campaigns/campaign-dispatch.js';
import { CampaignLifecycle } from './modules/campaigns/campaign-lifecycle.js';
import { CampaignRecords } from './modules/campaigns/campaign-records.js';
import { CampaignStatsReader } from './modules/campaigns/campaign-stats.js';
import { Contacts } from './modules/contacts/contacts.js';
import { FraudGuard } from './modules/fraud-guard/fraud-guard.js';
import { GuardRuleBook } from './modules/fraud-guard/guard-rules.js';
import { ContactImports } from './modules/imports/contact-imports.js';
import { Uploads } from './modules/imports/uploads.js';
import { LiveBudget } from './modules/live/live-budget.js';
import { createLivePubSub, LivePublisher, type LivePubSub } from './modules/live/live-events.js';
import { LiveSubscriptions } from './modules/live/live-subscriptions.js';
import { SubscriptionSlots } from './modules/live/subscription-slots.js';
import { CarrierReports } from './modules/messages/carrier-reports.js';
import { MessageCancellation } from './modules/messages/message-cancellation.js';
import { MessageDelivery } from './modules/messages/message-delivery.js';
import { MessagePages } from './modules/messages/message-pages.js';
import { MessageQueries } from './modules/messages/message-queries.js';
import { MessageSending } from './modules/messages/message-sending.js';
import { MessageStatusChanges } from './modules/messages/message-status-changes.js';
import { ScheduledReleases } from './modules/messages/scheduled-release.js';
import { OptOuts } from './modules/opt-outs/opt-outs.js';
import { AccountQuotas } from './modules/quotas/account-quotas.js';
import { RetentionSweep } from './modules/retention/retention-sweep.js';
import { AccountSenders } from './modules/senders/account-senders.js';
import { CountrySenderRules } from './modules/senders/country-sender-rules.js';
import { SenderChoice } from './modules/senders/sender-choice.js';
import { Settings } from './modules/settings/settings.js';
import { CarrierActivityReport } from './modules/stats/carrier-activity.js';
import { DeliveryTimes } from './modules/stats/delivery-times.js';
import { MessageStats } from './modules/stats/message-stats.js';
import { StatsReads } from './modules/stats/stats-reads.js';
import { Templates } from './modules/templates/templates.js';
import { VerificationChecks } from './modules/verifications/verification-checks.js';
import { VerificationStats } from './modules/verifications/verification-stats.js';
import { Verifications } from './modules/verifications/verifications.js';
import { WebhookDeliveries } from './modules/webhooks/webhook-deliveries.js';
import { WebhookSecrets } from './modules/webhooks/webhook-secrets.js';
import { WebhookSender } from './modules/webhooks/webhook-sender.js';
import { Webhooks } from './modules/webhooks/webhooks.js';

/**
 * The domain layer: every rule of the service lives behind these, shared by GraphQL, /v1 and the
 * workers. Each is named as its class is, so a resolver's `services.messageQueries` is a
 * `MessageQueries`.
 */
export interface Services {
  loginTokens: LoginTokens;
  authenticator: Authenticator;
  accounts: Accounts;
  apiKeys: ApiKeys;
  twoFactorLogin: TwoFactorLogin;
  settings: Settings;
  messageQueries: MessageQueries;
  messageSending: MessageSending;
  /** The workers' side: claims, the carrier's answers, the recovery of stranded messages. */
  messageDelivery: MessageDelivery;
  /** Where carriers hand their delivery reports and the replies they receive. */
  carrierReports: CarrierReports;
  /** Messages listed under another row (a campaign's, a message's replies). */
  messagePages: MessagePages;
  /** Cancelling scheduled messages: one a client names, or a cancelled campaign's waiting ones. */
  messageCancellation: MessageCancellation;
  /** The workers' loop that releases scheduled messages when they are due. */
  scheduledReleases: ScheduledReleases;
  optOuts: OptOuts;
  /** Segment quotas and destination countries of each account. */
  accountQuotas: AccountQuotas;
  /** The senders the operator approves per account, and the check of a send's `from`. */
  accountSenders: AccountSenders;
  /** The countries' sender rules as this process applies them, kept up to date. */
  countrySenderRules: CountrySenderRules;
  /** Which sender a message goes from: its `from`, the default sender, or a sticky pool sender. */
  senderChoice: SenderChoice;
  /** The check of each message against SMS pumping, before its segments are reserved. */
  fraudGuard: FraudGuard;
  campaignRecords: CampaignRecords;
  campaignLifecycle: CampaignLifecycle;
  campaignDispatch: CampaignDispatch;
  campaignStatsReader: CampaignStatsReader;
  /** The account's numbers for dashboards, from the rollups the message statements keep. */
  messageStats: MessageStats;
  deliveryTimes: DeliveryTimes;
  /** Each carrier's part of the last hour's messages, for the operator's list of carriers. */
  carrierActivityReport: CarrierActivityReport;
  contacts: Contacts;
  contactImports: ContactImports;
  templates: Templates;
  webhooks: Webhooks;
  webhookDeliveries: WebhookDeliveries;
  webhookDeliveryJobs: WebhookDeliveryJobs;
  retentionSweep: RetentionSweep;
  /** GraphQL subscriptions' streams of an account's changes. */
  liveSubscriptions: LiveSubscriptions;
  /** The operator's carriers and routes in PostgreSQL. */
  carrierCatalog: CarrierCatalog;
  /** The carriers and routes as this process applies them, kept up to date. */
  carrierDirectory: CarrierDirectory;
  /** One-time codes: starts, resends and reads. */
  verifications: Verifications;
  /** Checks of one-time codes, and the expiry of those never approved. */
  verificationChecks: VerificationChecks;
  /** Started, approved, expired and conversion of verifications by country. */
  verificationStats: VerificationStats;
  /** Every worker's carriers, binds and circuits, shared through Redis. */
  carrierHealth: CarrierHealthBoard;
  /** Reports and replies HTTP carriers' providers call back with (POST /carriers/{name}/events). */
  carrierCallbacks: CarrierCallbacks;
}

/** The composition root of the domain layer: each service made once, with what it depends on. */
export function createServices(deps: Dependencies): Services {
  const { prisma, clock, queues, config } = deps;
  const logger = (module: string) => deps.logger.child({ module });
  const jobs = {
    sendJobs: new MessageSendJobs(queues.messageSend, logger('messages')),
    dispatchJobs: new CampaignDispatchJobs(queues.campaignDispatch, clock, logger('campaigns')),
    webhookDeliveryJobs: new WebhookDeliveryJobs(queues.webhookDelivery, logger('webhooks')),
    importJobs: new ContactImportJobs(queues.contactImport, logger('imports')),
  };
  const livePubSub = createLivePubSub(deps.redis, deps.subscriber, logger('live'));
  const live = new LivePublisher(livePubSub, config.redisPrefix);
  const optOuts = new OptOuts(prisma);
  const accountQuotas = new AccountQuotas({
    prisma,
    clock,
    metrics: deps.metrics,
    logger: logger('quotas'),
  });
  const sendChecks = sendCheckServices(deps, logger);
  const carrierCatalog = new CarrierCatalog(prisma, config.carrierSecretKey, config.publicUrl);
  const carrierDirectory = new CarrierDirectory(carrierCatalog, logger('carriers'), CARRIER_SETTINGS_POLL_MS);
  const messages = messageServices(deps, {
    ...jobs,
    live,
    optOuts,
    accountQuotas,
    logger,
    routes: carrierDirectory,
    ...sendChecks,
  });
  const carrierCallbacks = callbackReceiver(deps, carrierCatalog, carrierDirectory, messages.carrierReports);
  return {
    carrierCatalog,
    carrierDirectory,
    carrierCallbacks,
    carrierHealth: new CarrierHealthBoard(deps.redis, config.redisPrefix, logger('carrier-health')),
    ...accountServices(deps, logger),
    ...messages,
    ...campaignServices(deps, {
      ...jobs,
      live,
      logger,
      accountQuotas,
      messageCancellation: messages.messageCancellation,
      ...sendChecks,
    }),
    ...webhookServices(deps, { webhookDeliveryJobs: jobs.webhookDeliveryJobs, logger }),
    ...statsServices(deps, logger),
    optOuts,
    accountQuotas,
    ...sendChecks,
    settings: new Settings(prisma),
    ...contactServices(deps, { importJobs: jobs.importJobs, live, logger }),
    retentionSweep: retentionSweepOf(deps, logger('retention')),
    ...verificationServices(deps, messages.messageSending),
    liveSubscriptions: liveSubscriptionsOf(deps, livePubSub, logger('live')),
  };
}

function verificationServices({ prisma, pool, clock, config }: Dependencies, sending: MessageSending) {
  return {
    verifications: new Verifications({ prisma, pool, clock, sending, codeKey: config.verificationCodeKey }),
    verificationChecks: new VerificationChecks(prisma, clock, config.verificationCodeKey),
    verificationStats: new VerificationStats(prisma, clock),
  };
}

/** The senders the operator approves, the countries' rules, and the choice each message's sender is made by. */
/** What a message must pass before it is accepted, besides the quotas: its sender, and the fraud guard. */
function sendCheckServices(deps: Dependencies, logger: ModuleLogger) {
  const { prisma, clock } = deps;
  const countrySenderRules = new CountrySenderRules(prisma, logger('senders'), CARRIER_SETTINGS_POLL_MS);
  return {
    accountSenders: new AccountSenders(prisma),
    countrySenderRules,
    senderChoice: new SenderChoice(prisma, countrySenderRules, clock),
    fraudGuard: fraudGuardOf(deps, logger('fraud-guard')),
  };
}

type SenderServices = ReturnType<typeof sendCheckServices>;

function retentionSweepOf({ prisma, clock, metrics, config }: Dependencies, logger: Logger): RetentionSweep {
  return new RetentionSweep({ prisma, clock, metrics, logger, retentionDays: config.retentionDays });
}

function contactServices(
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

function liveSubscriptionsOf(
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

type ModuleLogger = (module: string) => Logger;

function fraudGuardOf({ prisma, clock, config, redis, metrics }: Dependencies, logger: Logger): FraudGuard {
  return new FraudGuard({
    prisma,
    redis,
    prefix: config.redisPrefix,
    clock,
    metrics,
    logger,
    rules: new GuardRuleBook(prisma, clock, config.fraudGuard),
    defaults: config.fraudGuard,
  });
}

// How often every process reads the carriers and routes (and the countries' sender rules) again:
// a bound on how late a change applies.
const CARRIER_SETTINGS_POLL_MS = 1_000;

// How often an idle worker asks the index of scheduled messages for due ones: a bound on how late one goes.
const SCHEDULED_RELEASE_POLL_MS = 250;

function accountServices({ prisma, clock, config, pool, redis }: Dependencies, logger: ModuleLogger) {
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

function messageServices(
  { prisma, clock, config, metrics }: Dependencies,
  {
    sendJobs,
    dispatchJobs,
    live,
    optOuts,
    accountQuotas,
    logger,
    routes,
    accountSenders,
    senderChoice,
    countrySenderRules,
    fraudGuard,
  }: {
    sendJobs: MessageSendJobs;
    dispatchJobs: CampaignDispatchJobs;
    live: LivePublisher;
    optOuts: OptOuts;
    accountQuotas: AccountQuotas;
    logger: ModuleLogger;
    routes: CarrierDirectory;
    fraudGuard: FraudGuard;
  } & SenderServices,
) {
  const statusChanges = new MessageStatusChanges(prisma, metrics, live);
  return {
    messageQueries: new MessageQueries(prisma),
    messagePages: new MessagePages(prisma),
    messageSending: new MessageSending({
      prisma,
      clock,
      sendJobs,
      optOuts,
      live,
      quotas: accountQuotas,
      routes,
      senders: accountSenders,
      textBox: new SealedBox(config.messageTextKey),
      senderChoice,
      fraudGuard,
    }),
    messageDelivery: messageDeliveryOf(
      { prisma, clock, config },
      { statusChanges, sendJobs, countrySenderRules },
    ),
    carrierReports: new CarrierReports({ prisma, statusChanges, optOuts, live, logger: logger('messages') }),
    messageCancellation: new MessageCancellation({ prisma, clock, statusChanges, dispatchJobs }),
    scheduledReleases: new ScheduledReleases({
      prisma,
      clock,
      statusChanges,
      sendJobs,
      dispatchJobs,
      logger: logger('messages'),
      pollMs: SCHEDULED_RELEASE_POLL_MS,
    }),
  };
}

function messageDeliveryOf(
  { prisma, clock, config }: Pick<Dependencies, 'prisma' | 'clock' | 'config'>,
  {
    statusChanges,
    sendJobs,
    countrySenderRules,
  }: {
    statusChanges: MessageStatusChanges;
    sendJobs: MessageSendJobs;
    countrySenderRules: CountrySenderRules;
  },
): MessageDelivery {
  return new MessageDelivery({
    prisma,
    clock,
    statusChanges,
    sendJobs,
    carrierSender: carrierDefaultSender(config),
    textBox: new SealedBox(config.messageTextKey),
    senderRules: countrySenderRules,
  });
}

function callbackReceiver(
  { prisma, clock, config, logger, redis }: Dependencies,
  catalog: CarrierCatalog,
  directory: CarrierDirectory,
  reports: CarrierReports,
): CarrierCallbacks {
  return new CarrierCallbacks({
    prisma,
    clock,
    logger: logger.child({ module: 'carriers' }),
    publicUrl: config.publicUrl,
    knownCarrier: (name) => directory.carrier(name) ?? null,
    readCarrier: (name) => catalog.carrier(name).catch(() => null),
    redis,
    redisPrefix: config.redisPrefix,
    sinkFor: (carrier) => reports.sinkFor(carrier),
  });
}

function campaignServices(
  { prisma, clock, config }: Dependencies,
  {
    dispatchJobs,
    sendJobs,
    live,
    logger,
    accountQuotas,
    fraudGuard,
    messageCancellation,
    accountSenders,
    senderChoice,
  }: SenderServices & {
    accountQuotas: AccountQuotas;
    fraudGuard: FraudGuard;
    dispatchJobs: CampaignDispatchJobs;
    sendJobs: MessageSendJobs;
    live: LivePublisher;
    logger: ModuleLogger;
    messageCancellation: MessageCancellation;
  },
) {
  return {
    campaignRecords: new CampaignRecords({
      prisma,
      clock,
      dispatchJobs,
      allowInsecureWebhooks: config.webhookAllowInsecure,
      senders: accountSenders,
    }),
    campaignLifecycle: new CampaignLifecycle({
      prisma,
      clock,
      dispatchJobs,
      live,
      messageCancellation,
      logger: logger('campaigns'),
    }),
    campaignDispatch: new CampaignDispatch({
      prisma,
      clock,
      dispatchJobs,
      sendJobs,
      live,
      quotas: accountQuotas,
      senderChoice,
      fraudGuard,
      logger: logger('campaigns'),
    }),
    campaignStatsReader: new CampaignStatsReader(prisma),
  };
}

/**
 * The accounts' statistics reads, all through one gate (src/modules/stats/stats-reads.ts), and
 * the operator's report of the carriers, which no account can ask for.
 */
function statsServices({ prisma, clock, config, redis, statsPool }: Dependencies, logger: ModuleLogger) {
  const reads = new StatsReads({
    pool: statsPool,
    redis,
    prefix: config.redisPrefix,
    limits: { ...config.statsReads, windowSeconds: config.rateLimitWindowSeconds },
    logger: logger('stats'),
  });
  return {
    messageStats: new MessageStats(prisma, clock, reads),
    deliveryTimes: new DeliveryTimes(prisma, clock, reads),
    carrierActivityReport: new CarrierActivityReport(prisma, clock),
  };
}

function webhookServices(
  { prisma, clock, config, metrics }: Dependencies,
  { webhookDeliveryJobs, logger }: { webhookDeliveryJobs: WebhookDeliveryJobs; logger: ModuleLogger },
) {
  const secrets = new WebhookSecrets(prisma, config.webhookSecretKey);
  const sender = new WebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    allowInsecure: config.webhookAllowInsecure,
  });
  const webhookDeliveries = new WebhookDeliveries({
    prisma,
    clock,
    jobs: webhookDeliveryJobs,
    secrets,
    sender,
    logger: logger('webhooks'),
    retryBaseMs: config.webhookRetryBaseMs,
    timeoutMs: config.webhookTimeoutMs,
    metrics,
  });
  return {
    webhookDeliveries,
    webhookDeliveryJobs,
    webhooks: new Webhooks({
      prisma,
      clock,
      secrets,
      sender,
      deliveries: webhookDeliveries,
      deliveryJobs: webhookDeliveryJobs,
      allowInsecure: config.webhookAllowInsecure,
    }),
  };
}
