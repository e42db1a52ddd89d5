import type { Dependencies } from '../deps.js';
import type { CampaignDispatchJobs } from '../jobs/campaign-dispatch.job.js';
import type { MessageSendJobs } from '../jobs/message-send.job.js';
import { CampaignDispatch } from '../modules/campaigns/campaign-dispatch.js';
import { CampaignLifecycle } from '../modules/campaigns/campaign-lifecycle.js';
import { CampaignRecords } from '../modules/campaigns/campaign-records.js';
import { CampaignStatsReader } from '../modules/campaigns/campaign-stats.js';
import type { FraudGuard } from '../modules/fraud-guard/fraud-guard.js';
import type { LivePublisher } from '../modules/live/live-events.js';
import type { MessageCancellation } from '../modules/messages/message-cancellation.js';
import type { AccountQuotas } from '../modules/quotas/account-quotas.js';
import type { SenderServices } from './message-services.js';
import type { ModuleLogger } from './service-kit.js';

export function campaignServices(
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
