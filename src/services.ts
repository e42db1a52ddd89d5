import { carrierDefaultSender } from './carriers/index.js';
import type { Dependencies } from './deps.js';
import { CampaignDispatchJobs } from './jobs/campaign-dispatch.job.js';
import { ContactImportJobs } from './jobs/contact-import.job.js';
import { MessageSendJobs } from './jobs/message-send.job.js';
import { WebhookDeliveryJobs } from './jobs/webhook-delivery.job.js';
import { AccountService } from './modules/accounts/accounts.service.js';
import { Authenticator } from './modules/accounts/authentication.js';
import { LoginGuard } from './modules/accounts/login-guard.js';
import { TokenService } from './modules/accounts/tokens.js';
import { TwoFactorService } from './modules/accounts/two-factor.js';
import { ApiKeyService } from './modules/api-keys/api-keys.service.js';
import { CampaignDispatch } from './modules/campaigns/campaign-dispatch.js';
import { CampaignLifecycle } from './modules/campaigns/campaign-lifecycle.js';
import { CampaignRecords } from './modules/campaigns/campaign-records.js';
import { CampaignStatsReader } from './modules/campaigns/campaign-stats.js';
import { ContactService } from './modules/contacts/contacts.service.js';
import { ImportService } from './modules/imports/imports.service.js';
import { LiveBudget } from './modules/live/live-budget.js';
import { createLivePubSub, LivePublisher } from './modules/live/live-events.js';
import { LiveSubscriptions } from './modules/live/live-subscriptions.js';
import { SubscriptionSlots } from './modules/live/subscription-slots.js';
import { CarrierReports } from './modules/messages/carrier-reports.js';
import { MessageDelivery } from './modules/messages/message-delivery.js';
import { MessagePages } from './modules/messages/message-pages.js';
import { MessageQueries } from './modules/messages/message-queries.js';
import { MessageSending } from './modules/messages/message-sending.js';
import { MessageStatusChanges } from './modules/messages/message-status-changes.js';
import { OptOutService } from './modules/opt-outs/opt-outs.service.js';
import { RetentionService } from './modules/retention/retention.service.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { TemplateService } from './modules/templates/templates.service.js';
import { WebhookDeliveries } from './modules/webhooks/webhook-deliveries.js';
import { WebhookSecrets } from './modules/webhooks/webhook-secrets.js';
import { WebhookSender } from './modules/webhooks/webhook-sender.js';
import { WebhookService } from './modules/webhooks/webhooks.service.js';

/** The domain layer: every rule of the service lives behind these, shared by GraphQL, /v1 and the workers. */
export interface Services {
  tokens: TokenService;
  authenticator: Authenticator;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  twoFactor: TwoFactorService;
  settings: SettingsService;
  /** What the API reads of messages. */
  messages: MessageQueries;
  messageSending: MessageSending;
  /** The workers' side: claims, the carrier's answers, the recovery of stranded messages. */
  messageDelivery: MessageDelivery;
  /** Where carriers hand their delivery reports and the replies they receive. */
  carrierReports: CarrierReports;
  /** Messages listed under another row (a campaign's, a message's replies). */
  messagePages: MessagePages;
  optOuts: OptOutService;
  campaigns: CampaignRecords;
  campaignLifecycle: CampaignLifecycle;
  campaignDispatch: CampaignDispatch;
  campaignStats: CampaignStatsReader;
  contacts: ContactService;
  imports: ImportService;
  templates: TemplateService;
  webhooks: WebhookService;
  webhookDeliveries: WebhookDeliveries;
  webhookDeliveryJobs: WebhookDeliveryJobs;
  retention: RetentionService;
  /** GraphQL subscriptions' streams of an account's changes. */
  live: LiveSubscriptions;
}

/** The composition root of the domain layer: each service made once, with what it depends on. */
export function createServices(deps: Dependencies): Services {
  const { prisma, clock, queues, config } = deps;
  const logger = (module: string) => deps.logger.child({ module });

  const sendJobs = new MessageSendJobs(queues.messageSend, logger('messages'));
  const dispatchJobs = new CampaignDispatchJobs(queues.campaignDispatch, clock, logger('campaigns'));
  const webhookDeliveryJobs = new WebhookDeliveryJobs(queues.webhookDelivery, logger('webhooks'));
  const importJobs = new ContactImportJobs(queues.contactImport, logger('imports'));

  const livePubSub = createLivePubSub(deps.redis, deps.subscriber, logger('live'));
  const live = new LivePublisher(livePubSub, config.redisPrefix);

  const tokens = new TokenService(config.jwtSecret, clock);
  const apiKeys = new ApiKeyService(prisma, deps.pool, clock, logger('api-keys'));
  const twoFactor = new TwoFactorService(
    prisma,
    clock,
    config.twoFactorSecretKey,
    deps.redis,
    config.redisPrefix,
    logger('two-factor'),
  );
  const optOuts = new OptOutService(prisma);
  const statusChanges = new MessageStatusChanges(prisma, deps.metrics, live);
  const webhookSecrets = new WebhookSecrets(prisma, config.webhookSecretKey);
  const webhookSender = new WebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    allowInsecure: config.webhookAllowInsecure,
  });
  const webhookDeliveries = new WebhookDeliveries(
    prisma,
    clock,
    webhookDeliveryJobs,
    webhookSecrets,
    webhookSender,
    logger('webhooks'),
    config.webhookRetryBaseMs,
    config.webhookTimeoutMs,
    deps.metrics,
  );
  return {
    tokens,
    authenticator: new Authenticator(deps.pool, tokens, apiKeys),
    accounts: new AccountService(
      prisma,
      clock,
      tokens,
      new LoginGuard(deps.redis, config.redisPrefix),
      twoFactor,
    ),
    apiKeys,
    twoFactor,
    settings: new SettingsService(prisma),
    messages: new MessageQueries(prisma),
    messagePages: new MessagePages(prisma),
    messageSending: new MessageSending(prisma, clock, sendJobs, optOuts, live),
    messageDelivery: new MessageDelivery(
      prisma,
      clock,
      statusChanges,
      sendJobs,
      carrierDefaultSender(config),
    ),
    carrierReports: new CarrierReports(prisma, statusChanges, optOuts, live, logger('messages')),
    optOuts,
    campaigns: new CampaignRecords(prisma, clock, dispatchJobs, config.webhookAllowInsecure),
    campaignLifecycle: new CampaignLifecycle(prisma, clock, dispatchJobs, live, logger('campaigns')),
    campaignDispatch: new CampaignDispatch(prisma, clock, dispatchJobs, sendJobs, live, logger('campaigns')),
    campaignStats: new CampaignStatsReader(prisma),
    contacts: new ContactService(prisma, clock),
    imports: new ImportService(
      prisma,
      deps.pool,
      clock,
      importJobs,
      live,
      logger('imports'),
      config.importDir,
      { maxInflatedBytes: config.importMaxInflatedBytes },
    ),
    templates: new TemplateService(prisma, clock),
    webhooks: new WebhookService(
      prisma,
      clock,
      webhookSecrets,
      webhookSender,
      webhookDeliveries,
      webhookDeliveryJobs,
      config.webhookAllowInsecure,
    ),
    webhookDeliveries,
    webhookDeliveryJobs,
    retention: new RetentionService(prisma, clock, deps.metrics, logger('retention'), config.retentionDays),
    live: new LiveSubscriptions(
      livePubSub,
      config.redisPrefix,
      new SubscriptionSlots(deps.redis, config.redisPrefix, config.subscriptionsPerAccount, logger('live')),
      new LiveBudget(deps.redis, config.redisPrefix, logger('live')),
      logger('live'),
    ),
  };
}
