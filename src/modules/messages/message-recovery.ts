import type { Dependencies } from '../../deps.js';
import type { Services } from '../../services.js';

const SWEEP_LIMIT = 1_000;

/**
 * The safety net under the send queue: every few seconds, queued messages that no worker holds
 * (never enqueued because Redis was away, jobs lost with a Redis restart, or claimed by a worker
 * that died) are enqueued again. It runs on a timer of its own, not as a queued job, so that it
 * keeps running when the queue's own state has been lost.
 */
export function startMessageRecovery(deps: Dependencies, services: Services): { stop(): Promise<void> } {
  const { config, logger } = deps;
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      const stranded = await services.messages.findStranded({
        unclaimedForMs: config.recoveryAfterMs,
        leaseMs: config.claimLeaseMs,
        limit: SWEEP_LIMIT,
      });
      if (stranded.length > 0) {
        logger.info({ messages: stranded.length }, 'recovery sweep re-enqueues stranded messages');
        await services.messages.enqueue(stranded);
      }
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
