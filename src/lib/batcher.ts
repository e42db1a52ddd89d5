interface Waiting<In, Out> {
  item: In;
  resolve(out: Out): void;
  reject(error: unknown): void;
}

/**
 * Group commit for statements whose cost is per round trip and per commit, not per row:
 * calls made while `maxInFlight` batches are running wait and go together in the next one.
 * Alone, a call runs at once; under load, batches grow by themselves. `run` answers one
 * result per item, in order; if it throws, every call of the batch gets the error.
 */
export class Batcher<In, Out> {
  private waiting: Waiting<In, Out>[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly options: { maxBatch: number; maxInFlight: number },
  ) {}

  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      this.run(batch.map((waiting) => waiting.item))
        .then(
          (results) => {
            for (const [index, waiting] of batch.entries()) waiting.resolve(results[index] as Out);
          },
          (error: unknown) => {
            for (const waiting of batch) waiting.reject(error);
          },
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
