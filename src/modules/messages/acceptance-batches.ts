import type { PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import { Batcher } from '../../lib/batcher.js';
import type { LivePublisher } from '../live/live-events.js';
import { type OptOuts, optedOutError } from '../opt-outs/opt-outs.js';
import type { AccountQuotas } from '../quotas/account-quotas.js';
import type { SenderChoice } from '../senders/sender-choice.js';
import { chooseSenders } from './accepted-senders.js';
import type { AcceptedRow } from './message-acceptance.js';
import { insertMessageRows, reservationsOf } from './message-rows.js';

export interface AcceptanceBatchesOptions {
  prisma: PrismaClient;
  sendJobs: MessageSendJobs;
  optOuts: OptOuts;
  live: LivePublisher;
  quotas: AccountQuotas;
  senderChoice: SenderChoice;
}

/**
 * Concurrent sends without an idempotency key share one choice of senders, one opt-out check,
 * one multi-row INSERT and one `addBulk`: the commit and the round trips are most of a send's cost, not the rows. Should
 * the INSERT fail, or an account of the batch lack room for all of its messages, each of those
 * messages is tried alone, so that one bad row or one send over a quota fails only its own request.
 */
export class AcceptanceBatches {
  // One acceptance batch at a time: sends arriving meanwhile wait a few milliseconds and share
  // the next one, so that send jobs (made per batch) carry many messages under load.
  private readonly accepted = new Batcher((messages: AcceptedRow[]) => this.insertAndEnqueue(messages), {
    maxBatch: 100,
    maxInFlight: 1,
  });

  constructor(private readonly options: AcceptanceBatchesOptions) {}

  /** Stores the message with the next batch; answers why it was refused, or null once it is accepted. */
  add(message: AcceptedRow): Promise<Error | null> {
    return this.accepted.add(message);
  }

  private async insertAndEnqueue(batch: AcceptedRow[]): Promise<(Error | null)[]> {
    const { senderChoice, prisma, optOuts } = this.options;
    const [refused, optedOut] = await Promise.all([
      chooseSenders(senderChoice, prisma, batch),
      optOuts.optedOut(batch),
    ]);
    const messages = batch.filter((_, index) => !optedOut[index] && !refused[index]);
    const results = messages.length > 0 ? await this.insertAndEnqueueReachable(messages) : [];
    let result = 0;
    return batch.map(
      (_, index) => refused[index] ?? (optedOut[index] ? optedOutError() : results[result++]!),
    );
  }

  private async insertAndEnqueueReachable(messages: AcceptedRow[]): Promise<(Error | null)[]> {
    let insertedIds: Set<string>;
    try {
      insertedIds = await this.insertMessages(messages);
    } catch (error) {
      if (messages.length === 1) return [asError(error)];
      return this.insertEachAlone(messages);
    }
    const inserted = messages.filter((message) => insertedIds.has(message.id));
    await this.acceptInserted(inserted);
    if (inserted.length === messages.length) return messages.map(() => null);
    const left = messages.filter((message) => !insertedIds.has(message.id));
    const leftResults = await this.retryRefused(left);
    const resultOf = new Map(left.map((message, index) => [message.id, leftResults[index]!]));
    return messages.map((message) => resultOf.get(message.id) ?? null);
  }

  /**
   * The messages whose account had no room for all of its batch: of an account with several,
   * those that would fit now are tried alone, where each reservation decides exactly; the others
   * are refused from one read of their accounts' standing, so that a send over a quota costs one
   * statement, not three.
   */
  private async retryRefused(left: AcceptedRow[]): Promise<(Error | null)[]> {
    const { quotas } = this.options;
    const standings = await quotas.standings(left.map((message) => message.accountId));
    const perAccount = new Map<string, number>();
    for (const { accountId } of left) perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1);
    const fits = (message: AcceptedRow) => {
      const standing = standings.get(message.accountId);
      return standing !== undefined && message.segments <= Math.min(standing.dayRoom, standing.monthRoom);
    };
    const alone = left.filter((message) => perAccount.get(message.accountId)! > 1 && fits(message));
    const aloneResults = await this.insertEachAlone(alone);
    const resultOf = new Map(alone.map((message, index) => [message.id, aloneResults[index]!]));
    return left.map((message) =>
      resultOf.has(message.id)
        ? resultOf.get(message.id)!
        : quotas.refusalOf(standings.get(message.accountId), message.segments),
    );
  }

  /** Each message in a statement of its own; the inserted ones published and enqueued together. */
  private async insertEachAlone(messages: AcceptedRow[]): Promise<(Error | null)[]> {
    const alone = await Promise.all(
      messages.map(async (message) => {
        const inserted = await this.insertMessages([message]).catch(asError);
        if (inserted instanceof Error) return inserted;
        return inserted.has(message.id)
          ? null
          : this.options.quotas.refusal(message.accountId, message.segments);
      }),
    );
    await this.acceptInserted(messages.filter((_, index) => alone[index] === null));
    return alone;
  }

  /** Messages stored (by a batch or an idempotent send): published, then the queued ones enqueued. */
  async acceptInserted(messages: AcceptedRow[]): Promise<void> {
    if (messages.length === 0) return;
    this.publishAccepted(messages);
    await this.enqueueQueued(messages);
  }

  /**
   * Published before the send job exists, on the connection the job is added on: Redis keeps
   * their order, so no subscriber hears of a message being sent before hearing it was queued.
   */
  private publishAccepted(messages: AcceptedRow[]): void {
    this.options.live.messages(
      messages.map(({ id, accountId, to, campaignId, status }) => ({
        id,
        accountId,
        to,
        campaignId,
        status,
      })),
    );
  }

  /** Scheduled messages wait for the release of their due time; the others go to the send queue now. */
  private enqueueQueued(messages: AcceptedRow[]): Promise<unknown> {
    return this.options.sendJobs.enqueue(messages.filter((m) => m.status === 'queued').map((m) => m.id));
  }

  /** The ids inserted: a message left out is one whose account had no room for it. */
  private async insertMessages(messages: AcceptedRow[]): Promise<Set<string>> {
    const inserted = await insertMessageRows(this.options.prisma, messages);
    await this.options.quotas.noteReserved(reservationsOf(inserted));
    return new Set(inserted.map((row) => row.id));
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
