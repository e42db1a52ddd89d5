import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MessageStatus } from '../../generated/prisma/enums.js';

/** A message that changed: `status` is what it moved to, null when a reply to it arrived. */
export interface MessageChange {
  id: string;
  to: string;
  campaignId: string | null;
  status: MessageStatus | null;
}

/**
 * What goes through Redis, on one channel per account: ids and small fields only, never rows,
 * so that publishing costs the hot paths one PUBLISH per batch and account; a subscriber reads
 * the rows it shows.
 */
export type LiveEvent =
  | { kind: 'messages'; messages: MessageChange[] }
  | { kind: 'campaign'; id: string }
  | { kind: 'import'; id: string };

export type LivePubSub = ReturnType<typeof createLivePubSub>;

/**
 * Yoga's pub/sub over Redis, so that a change made in any process reaches the subscribers of
 * every API process. Publishing is fire-and-forget (the event target does not wait for Redis):
 * a publish that fails is logged rather than left as an unhandled rejection, and loses only
 * that live update, never the change itself, which is already committed.
 */
export function createLivePubSub(publisher: Redis, subscriber: Redis, logger: Logger) {
  const publishClient = {
    publish: (channel: string, message: string) =>
      publisher.publish(channel, message).catch((error: unknown) => {
        logger.warn({ err: error, channel }, 'live update not published');
        return 0;
      }),
  };
  const eventTarget = createRedisEventTarget({
    // The event target only ever calls `publish` on its publishing client.
    publishClient: publishClient as unknown as Redis,
    subscribeClient: subscriber,
  });
  return createPubSub<Record<string, [LiveEvent]>>({ eventTarget });
}

/** The Redis channel of an account's live updates, under Tern's key prefix like every other name. */
export function liveChannel(prefix: string, accountId: string): string {
  return `${prefix}:live:${accountId}`;
}

/** What the domain calls where things change; each call is one PUBLISH, nothing is awaited. */
export class LivePublisher {
  constructor(
    private readonly pubSub: LivePubSub,
    private readonly prefix: string,
  ) {}

  /** One event per account for a whole batch of changes. */
  messages(changes: readonly (MessageChange & { accountId: string })[]): void {
    const byAccount = new Map<string, MessageChange[]>();
    for (const { accountId, ...change } of changes) {
      const list = byAccount.get(accountId) ?? [];
      if (list.length === 0) byAccount.set(accountId, list);
      list.push(change);
    }
    for (const [accountId, messages] of byAccount) this.publish(accountId, { kind: 'messages', messages });
  }

  campaign(accountId: string, id: string): void {
    this.publish(accountId, { kind: 'campaign', id });
  }

  importJob(accountId: string, id: string): void {
    this.publish(accountId, { kind: 'import', id });
  }

  private publish(accountId: string, event: LiveEvent): void {
    this.pubSub.publish(liveChannel(this.prefix, accountId), event);
  }
}
