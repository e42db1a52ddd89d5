import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { LiveBudget } from './live-budget.js';
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
 * The most updates one stream holds for its client. A client that stops reading (its socket full),
 * or an account whose updates outrun its budget, would otherwise make the process keep every later
 * event of the account; past this many waiting the stream ends, freeing its slot, and the client
 * subscribes again.
 */
export const MAX_UNREAD_UPDATES = 500;

/** What a subscriber asks for. */
export interface StreamRequest<Item> {
  accountId: string;
  /** The items of an event that this stream delivers, one update each. */
  pick: (event: LiveEvent) => Item[];
  /** Whether the subscriber's credential still names its account; asked before an event's items are taken. */
  stillAllowed: () => Promise<boolean>;
  /** What each update costs the account's budget: what the subscription's selection can cost at most (src/graphql/query-cost.ts). */
  cost: number;
  /** Aborts when the subscriber's connection closes, whether or not the stream has started. */
  connectionClosed: AbortSignal;
  /**
   * When set, the stream hands out at most one update per this many milliseconds: the items that
   * come meanwhile make one update (the latest), delivered once the interval has passed.
   */
  coalesceMs?: number;
}

/**
 * One subscriber's stream: the items `pick` finds in each of the account's events. The account's
 * events are read as they come, whether or not the client keeps up, so that what waits for a
 * slow client is bounded here (MAX_UNREAD_UPDATES), not queued without end in the pub/sub. Each
 * item is charged to the account's budget as it is handed out, before its selection runs.
 * Ending it (the client goes away, the process stops, or the stream fell too far behind)
 * unsubscribes and frees its slot at once.
 */
class LiveStream<Item> implements AsyncIterableIterator<Item> {
  private readonly ready: Item[] = [];
  /** No item will be added: the source ended, the caller lost its right, or it fell behind. */
  private closed = false;
  private readonly ending = new AbortController();
  private wake: (() => void) | null = null;
  /** When the last update was handed out (a monotonic clock: only intervals are measured). */
  private handedAt = Number.NEGATIVE_INFINITY;
  private readonly endOnDisconnect = () => void this.return();

  constructor(
    private readonly source: AsyncIterator<LiveEvent>,
    private readonly request: StreamRequest<Item>,
    private readonly budget: LiveBudget,
    private readonly onEnd: () => void,
    private readonly onTooSlow: () => void,
  ) {
    request.connectionClosed.addEventListener('abort', this.endOnDisconnect, { once: true });
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed) {
        const event = await this.source.next();
        if (event.done) break;
        const items = this.request.pick(event.value);
        if (items.length === 0) continue;
        // Asked only when there is something to deliver; a caller no longer allowed sees the stream end.
        if (!(await this.request.stillAllowed())) {
          this.ready.length = 0;
          break;
        }
        if (this.request.coalesceMs) this.ready.splice(0, this.ready.length, items.at(-1) as Item);
        else this.ready.push(...items);
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
      if (this.closed || this.ending.signal.aborted) return this.return();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    await this.spaced();
    const { accountId, cost } = this.request;
    if (!(await this.budget.charge(accountId, cost, this.ending.signal))) return this.return();
    // While it waited for the budget the stream may have fallen too far behind and been emptied.
    if (this.ready.length === 0) return this.return();
    this.handedAt = performance.now();
    return { done: false, value: this.ready.shift() as Item };
  }

  /** Waits out the rest of a coalescing stream's interval since its last update. */
  private async spaced(): Promise<void> {
    const wait = this.handedAt + (this.request.coalesceMs ?? 0) - performance.now();
    if (this.request.coalesceMs && wait > 0)
      await sleep(wait, undefined, { signal: this.ending.signal }).catch(() => undefined);
  }

  async return(): Promise<IteratorResult<Item>> {
    if (!this.ending.signal.aborted) {
      this.ending.abort();
      this.closed = true;
      this.ready.length = 0;
      this.request.connectionClosed.removeEventListener('abort', this.endOnDisconnect);
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

export interface LiveSubscriptionsOptions {
  pubSub: LivePubSub;
  prefix: string;
  slots: SubscriptionSlots;
  budget: LiveBudget;
  logger: Logger;
}

/**
 * The API side of live updates: an account's streams, within its cap and its budget, ended on
 * shutdown; and the rows their updates show, read once for all the streams that show them.
 */
export class LiveSubscriptions {
  private readonly open = new Set<LiveStream<unknown>>();
  /** Reads on their way, by the event they are for and the row and how it is read. */
  private readonly reading = new Map<object, Map<string, Promise<unknown>>>();
  private readonly pubSub: LivePubSub;
  private readonly prefix: string;
  private readonly slots: SubscriptionSlots;
  private readonly budget: LiveBudget;
  private readonly logger: Logger;

  constructor(options: LiveSubscriptionsOptions) {
    ({
      pubSub: this.pubSub,
      prefix: this.prefix,
      slots: this.slots,
      budget: this.budget,
      logger: this.logger,
    } = options);
  }

  /**
   * Throws TooManySubscriptionsError when the account has its maximum open already. The stream
   * ends at the first update after `stillAllowed` answers false (its credential was revoked), and
   * as soon as its connection closes, even before its first byte.
   */
  async subscribe<Item>(request: StreamRequest<Item>): Promise<AsyncIterableIterator<Item>> {
    const { accountId } = request;
    const release = await this.slots.acquire(accountId);
    if (!release) throw new TooManySubscriptionsError(this.slots.max);
    const source = this.pubSub.subscribe(liveChannel(this.prefix, accountId))[Symbol.asyncIterator]();
    const stream: LiveStream<Item> = new LiveStream(
      source,
      request,
      this.budget,
      () => {
        this.open.delete(stream);
        release();
      },
      () =>
        this.logger.warn(
          { account: accountId },
          `live update stream ended: more than ${MAX_UNREAD_UPDATES} updates waited for it`,
        ),
    );
    this.open.add(stream);
    // The client may have left while the slot was being taken.
    if (request.connectionClosed.aborted) await stream.return();
    return stream;
  }

  /**
   * The row an update shows, read once for every stream and alias that shows it for the same
   * event (`key` names the row and how it is read): the account's streams receive the same event
   * object, and those delivering its update at the same moment share one read. A stream that
   * comes later (it waited for the budget) reads afresh, so no row outlives the moment it was
   * read for.
   */
  readFor<Row>(event: object, key: string, read: () => Promise<Row>): Promise<Row> {
    let byKey = this.reading.get(event);
    const known = byKey?.get(key);
    if (known) return known as Promise<Row>;
    if (!byKey) {
      byKey = new Map();
      this.reading.set(event, byKey);
    }
    const reads = byKey;
    const row = read().finally(() => {
      reads.delete(key);
      if (reads.size === 0) this.reading.delete(event);
    });
    reads.set(key, row);
    return row;
  }

  /** Ends every open stream (their clients see them complete) so that the HTTP server can drain. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((stream) => stream.return()));
    this.slots.stop();
  }
}
