import type { Dependencies } from '../deps.js';
import type { WebhookDeliveryJobs } from '../jobs/webhook-delivery.job.js';
import { WebhookDeliveries } from '../modules/webhooks/webhook-deliveries.js';
import { WebhookSecrets } from '../modules/webhooks/webhook-secrets.js';
import { WebhookSender } from '../modules/webhooks/webhook-sender.js';
import { Webhooks } from '../modules/webhooks/webhooks.js';
import type { ModuleLogger } from './service-kit.js';

export function webhookServices(
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
