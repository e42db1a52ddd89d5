import type { Dependencies } from '../deps.js';
import type { Services } from '../services.js';

const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the queues: every few seconds, queued messages that no worker holds
 * (never enqueued because Redis was away, jobs lost with a Redis restart, or claimed by a worker
 * that died) are enqueued again, and so are overdue campaign batches, campaign starts, webhook attempts and imports. It runs on a timer of its own, not as a queued job, so that it
 * keeps running when the queue's own state has been lost.
 */
export function startRecovery(deps: Dependencies, services: Services): { stop(): Promise<void> } {
  const { config, logger } = deps;
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      const messages = await services.messageDelivery.recoverStranded({
        unclaimedForMs: config.recoveryAfterMs,
        leaseMs: config.claimLeaseMs,
        limit: SWEEP_LIMIT,
      });
      if (messages > 0) logger.info({ messages }, 'recovery sweep re-enqueued stranded messages');
      const campaigns = await services.campaignDispatch.recoverStalled(config.recoveryAfterMs);
      if (campaigns > 0) logger.info({ campaigns }, 'recovery sweep re-enqueued overdue campaign jobs');
      const deliveries = await services.webhookDeliveries.recoverStalled(config.recoveryAfterMs);
      if (deliveries > 0) logger.info({ deliveries }, 'recovery sweep re-enqueued overdue webhook attempts');
      const imports = await services.contactImports.recoverStalled(config.recoveryAfterMs);
      if (imports > 0) logger.info({ imports }, 'recovery sweep re-enqueued unfinished imports');
    } catch (error) {
      logger.warn({ err: error }, 'recovery sweep failed; trying again next round');
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
      running = null;
    });
  }, config.recoveryIntervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
