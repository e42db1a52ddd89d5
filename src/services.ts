import { CarrierCatalog } from './carriers/carrier-catalog.js';
import type { CarrierCallbacks } from './carriers/index.js';
import { CarrierDirectory } from './carriers/routing/carrier-directory.js';
import { CarrierHealthBoard } from './carriers/routing/carrier-health.js';
import type { Dependencies } from './deps.js';
import { CampaignDispatchJobs } from './jobs/campaign-dispatch.job.js';
import { ContactImportJobs } from './jobs/contact-import.job.js';
import { MessageSendJobs } from './jobs/message-send.job.js';
import { WebhookDeliveryJobs } from './jobs/webhook-delivery.job.js';
import type { Accounts } from './modules/accounts/accounts.js';
import type { Authenticator } from './modules/accounts/authentication.js';
import type { LoginTokens } from './modules/accounts/login-tokens.js';
import type { TwoFactorLogin } from './modules/accounts/two-factor-login.js';
import type { ApiKeys } from './modules/api-keys/api-keys.js';
import type { CampaignDispatch } from './modules/campaigns/campaign-dispatch.js';
import type { CampaignLifecycle } from './modules/campaigns/campaign-lifecycle.js';
import type { CampaignRecords } from './modules/campaigns/campaign-records.js';
import type { CampaignStatsReader } from './modules/campaigns/campaign-stats.js';
import type { Contacts } from './modules/contacts/contacts.js';
import type { FraudGuard } from './modules/fraud-guard/fraud-guard.js';
import type { ContactImports } from './modules/imports/contact-imports.js';
import { createLivePubSub, LivePublisher } from './modules/live/live-events.js';
import type { LiveSubscriptions } from './modules/live/live-subscriptions.js';
import type { CarrierReports } from './modules/messages/carrier-reports.js';
import type { MessageCancellation } from './modules/messages/message-cancellation.js';
import type { MessageDelivery } from './modules/messages/message-delivery.js';
import type { MessagePages } from './modules/messages/message-pages.js';
import type { MessageQueries } from './modules/messages/message-queries.js';
import type { MessageSending } from './modules/messages/message-sending.js';
import type { ScheduledReleases } from './modules/messages/scheduled-release.js';
import { OptOuts } from './modules/opt-outs/opt-outs.js';
import { AccountQuotas } from './modules/quotas/account-quotas.js';
import type { RetentionSweep } from './modules/retention/retention-sweep.js';
import type { AccountSenders } from './modules/senders/account-senders.js';
import type { CountrySenderRules } from './modules/senders/country-sender-rules.js';
import type { SenderChoice } from './modules/senders/sender-choice.js';
import { Settings } from './modules/settings/settings.js';
import type { CarrierActivityReport } from './modules/stats/carrier-activity.js';
import type { DeliveryTimes } from './modules/stats/delivery-times.js';
import type { MessageStats } from './modules/stats/message-stats.js';
import type { StatsSettler } from './modules/stats/stats-settle.js';
import type { Templates } from './modules/templates/templates.js';
import type { VerificationChecks } from './modules/verifications/verification-checks.js';
import type { VerificationStats } from './modules/verifications/verification-stats.js';
import type { Verifications } from './modules/verifications/verifications.js';
import type { WebhookDeliveries } from './modules/webhooks/webhook-deliveries.js';
import type { Webhooks } from './modules/webhooks/webhooks.js';
import {
  accountServices,
  contactServices,
  liveSubscriptionsOf,
  retentionSweepOf,
} from './services/account-services.js';
import { campaignServices } from './services/campaign-services.js';
import { callbackReceiver } from './services/carrier-services.js';
import { messageServices, sendCheckServices, verificationServices } from './services/message-services.js';
import { CARRIER_SETTINGS_POLL_MS } from './services/service-kit.js';
import { statsServices } from './services/stats-services.js';
import { webhookServices } from './services/webhook-services.js';

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
  /** Moves old quarter-hours' statistics to the tables long reads use. */
  statsSettler: StatsSettler;
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
