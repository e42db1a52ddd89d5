import { AppError } from '../../errors.js';
import { type LiveEvent, type LivePubSub, liveChannel } from './live-events.js';
import type { SubscriptionSlots } from './subscription-slots.js';

export class TooManySubscriptionsError extends AppError {
  constructor(max: number) {
    super(
      'rate_limited',
      `At most ${max} subscriptions may be open at once for an account; close one before opening another`,
    );
  }
}

/**
 * One subscriber's stream: the items `pick` finds in each of the account's events. Ending it
 * (the client goes away, or the process stops) unsubscribes and frees its slot at once, even
 * while it waits for the next event.
 */
class LiveStream<Item> implements AsyncIterableIterator<Item> {
  private readonly ready: Item[] = [];
  private ended = false;

  constructor(
    private readonly source: AsyncIterator<LiveEvent>,
    private readonly pick: (event: LiveEvent) => Item[],
    private readonly stillAllowed: () => Promise<boolean>,
    private readonly onEnd: () => void,
  ) {}

  async next(): Promise<IteratorResult<Item>> {
    while (this.ready.length === 0) {
      if (this.ended) return { done: true, value: undefined };
      const event = await this.source.next();
      if (event.done) return this.return();
      const items = this.pick(event.value);
      // Asked only when there is something to deliver; a caller no longer allowed sees the stream end.
      if (items.length > 0 && !(await this.stillAllowed())) return this.return();
      this.ready.push(...items);
    }
    return { done: false, value: this.ready.shift()! };
  }

  async return(): Promise<IteratorResult<Item>> {
    if (!this.ended) {
      this.ended = true;
      this.onEnd();
      await this.source.return?.();
    }
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** The API side of live updates: an account's streams, within its cap, ended on shutdown. */
export class LiveSubscriptions {
  private readonly open = new Set<LiveStream<unknown>>();

  constructor(
    private readonly pubSub: LivePubSub,
    private readonly prefix: string,
    private readonly slots: SubscriptionSlots,
  ) {}

  /**
   * Throws TooManySubscriptionsError when the account has its maximum open already. The stream
   * ends at the first update after `stillAllowed` answers false (its credential was revoked).
   */
  async subscribe<Item>(
    accountId: string,
    pick: (event: LiveEvent) => Item[],
    stillAllowed: () => Promise<boolean>,
  ): Promise<AsyncIterableIterator<Item>> {
    const release = await this.slots.acquire(accountId);
    if (!release) throw new TooManySubscriptionsError(this.slots.max);
    const source = this.pubSub.subscribe(liveChannel(this.prefix, accountId))[Symbol.asyncIterator]();
    const stream: LiveStream<Item> = new LiveStream(source, pick, stillAllowed, () => {
      this.open.delete(stream);
      release();
    });
    this.open.add(stream);
    return stream;
  }

  /** Ends every open stream (their clients see them complete) so that the HTTP server can drain. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((stream) => stream.return()));
    this.slots.stop();
  }
}
