import type { Logger } from 'pino';

/**
 * A loop that works through a table in batches: it runs `step` again at once while steps come
 * back full, and otherwise sleeps `pollMs` or until woken. A failing step is logged and retried
 * on the next round, so a passing database error never stops the loop.
 */
export class PollingLoop {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly options: {
      /** Does one batch; answers how many items it took. */
      step: () => Promise<number>;
      batch: number;
      pollMs: number;
      logger: Logger;
      failure: string;
    },
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Ends the sleep early: new work is waiting. */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let taken = 0;
      try {
        taken = await this.options.step();
      } catch (error) {
        this.options.logger.error({ err: error }, this.options.failure);
      }
      if (taken < this.options.batch && this.running) {
        await new Promise<void>((resolve) => {
          this.wakeUp = resolve;
          setTimeout(resolve, this.options.pollMs).unref();
        });
        this.wakeUp = null;
      }
    }
  }
}
