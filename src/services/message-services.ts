import type { Logger } from 'pino';
import { carrierDefaultSender } from '../carriers/index.js';
import type { CarrierDirectory } from '../carriers/routing/carrier-directory.js';
import type { Dependencies } from '../deps.js';
import type { CampaignDispatchJobs } from '../jobs/campaign-dispatch.job.js';
import type { MessageSendJobs } from '../jobs/message-send.job.js';
import { SealedBox } from '../lib/sealed-box.js';
import { FraudGuard } from '../modules/fraud-guard/fraud-guard.js';
import { GuardRuleBook } from '../modules/fraud-guard/guard-rules.js';
import type { LivePublisher } from '../modules/live/live-events.js';
import { CarrierReports } from '../modules/messages/carrier-reports.js';
import { MessageCancellation } from '../modules/messages/message-cancellation.js';
import { MessageDelivery } from '../modules/messages/message-delivery.js';
import { MessagePages } from '../modules/messages/message-pages.js';
import { MessageQueries } from '../modules/messages/message-queries.js';
import { MessageSending } from '../modules/messages/message-sending.js';
import { MessageStatusChanges } from '../modules/messages/message-status-changes.js';
import { ScheduledReleases } from '../modules/messages/scheduled-release.js';
import type { OptOuts } from '../modules/opt-outs/opt-outs.js';
import type { AccountQuotas } from '../modules/quotas/account-quotas.js';
import { AccountSenders } from '../modules/senders/account-senders.js';
import { CountrySenderRules } from '../modules/senders/country-sender-rules.js';
import { SenderChoice } from '../modules/senders/sender-choice.js';
import { VerificationChecks } from '../modules/verifications/verification-checks.js';
import { VerificationStats } from '../modules/verifications/verification-stats.js';
import { Verifications } from '../modules/verifications/verifications.js';
import { CARRIER_SETTINGS_POLL_MS, type ModuleLogger } from './service-kit.js';

// How often an idle worker asks the index of scheduled messages for due ones: a bound on how late one goes.
const SCHEDULED_RELEASE_POLL_MS = 250;

/** What a message must pass before it is accepted, besides the quotas: its sender, and the fraud guard. */
export function sendCheckServices(deps: Dependencies, logger: ModuleLogger) {
  const { prisma, clock } = deps;
  const countrySenderRules = new CountrySenderRules(prisma, logger('senders'), CARRIER_SETTINGS_POLL_MS);
  return {
    accountSenders: new AccountSenders(prisma),
    countrySenderRules,
    senderChoice: new SenderChoice(prisma, countrySenderRules, clock),
    fraudGuard: fraudGuardOf(deps, logger('fraud-guard')),
  };
}

export type SenderServices = ReturnType<typeof sendCheckServices>;

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

export function messageServices(
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

export function verificationServices({ prisma, pool, clock, config }: Dependencies, sending: MessageSending) {
  return {
    verifications: new Verifications({ prisma, pool, clock, sending, codeKey: config.verificationCodeKey }),
    verificationChecks: new VerificationChecks(prisma, clock, config.verificationCodeKey),
    verificationStats: new VerificationStats(prisma, clock),
  };
}
