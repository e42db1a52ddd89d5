import type { Logger } from 'pino';
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
 * The most updates one stream holds for its client. A client that stops reading (its socket full)
 * would otherwise make the process keep every later event of its account; past this many unread
 * the stream ends, freeing its slot, and the client subscribes again once it reads.
 */
export const MAX_UNREAD_UPDATES = 500;

/**
 * One subscriber's stream: the items `pick` finds in each of the account's events. The account's
 * events are read as they come, whether or not the client keeps up, so that what waits for a
 * slow client is bounded here (MAX_UNREAD_UPDATES), not queued without end in the pub/sub.
 * Ending it (the client goes away, the process stops, or the client fell too far behind)
 * unsubscribes and frees its slot at once.
 */
class LiveStream<Item> implements AsyncIterableIterator<Item> {
  private readonly ready: Item[] = [];
  /** No item will be added: the source ended, the caller lost its right, or it fell behind. */
  private closed = false;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly source: AsyncIterator<LiveEvent>,
    private readonly pick: (event: LiveEvent) => Item[],
    private readonly stillAllowed: () => Promise<boolean>,
    private readonly onEnd: () => void,
    private readonly onTooSlow: () => void,
  ) {
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed) {
        const event = await this.source.next();
        if (event.done) break;
        const items = this.pick(event.value);
        if (items.length === 0) continue;
        // Asked only when there is something to deliver; a caller no longer allowed sees the stream end.
        if (!(await this.stillAllowed())) {
          this.ready.length = 0;
          break;
        }
        this.ready.push(...items);
        if (this.ready.length > MAX_UNREAD_UPDATES) {
          this.ready.length = 0;
          this.onTooSlow();
          break;
        }
        this.notify();
      }
    } catch {
      // The pub/sub or the credential check failed (Redis or PostgreSQL away): the stream ends
      // as if closed, and its client subscribes again.
      this.ready.length = 0;
    } finally {
      this.closed = true;
      this.notify();
      if (this.ready.length === 0) await this.return();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async next(): Promise<IteratorResult<Item>> {
    while (this.ready.length === 0) {
      if (this.closed || this.ended) return this.return();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return { done: false, value: this.ready.shift()! };
  }

  async return(): Promise<IteratorResult<Item>> {
    if (!this.ended) {
      this.ended = true;
      this.closed = true;
      this.ready.length = 0;
      this.notify();
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
    private readonly logger: Logger,
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
    const stream: LiveStream<Item> = new LiveStream(
      source,
      pick,
      stillAllowed,
      () => {
        this.open.delete(stream);
        release();
      },
      () => this.logger.warn({ account: accountId }, 'live update stream ended: its client stopped reading'),
    );
    this.open.add(stream);
    return stream;
  }

  /** Ends every open stream (their clients see them complete) so that the HTTP server can drain. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((stream) => stream.return()));
    this.slots.stop();
  }
}
