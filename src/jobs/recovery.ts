import type { Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * One kind of stranded work the sweep puts back: `run` enqueues it again and answers how many
 * it found; a count above 0 is logged under `key` with `found`.
 */
export interface RecoveryTask {
  key: string;
  found: string;
  run(): Promise<number>;
}

/**
 * The safety net under the queues: every few seconds, queued messages that no worker holds
 * (never enqueued because Redis was away, jobs lost with a Redis restart, or claimed by a worker
 * that died) are enqueued again, and so are overdue campaign batches, campaign starts, webhook attempts and imports. It runs on a timer of its own, not as a queued job, so that it
 * keeps running when the queue's own state has been lost. The process gives it its tasks
 * (`recoveryTasks` in src/app.ts), one after another each round.
 */
export function startRecovery(
  deps: { config: Pick<Config, 'recoveryIntervalMs'>; logger: Logger },
  tasks: readonly RecoveryTask[],
): { stop(): Promise<void> } {
  const { config, logger } = deps;
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      for (const task of tasks) {
        const count = await task.run();
        if (count > 0) logger.info({ [task.key]: count }, `recovery sweep re-enqueued ${task.found}`);
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
