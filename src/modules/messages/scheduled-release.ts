import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import { PollingLoop } from '../../jobs/polling-loop.js';
import type { Clock } from '../../lib/clock.js';
import { settleWaitingCampaigns } from '../campaigns/campaign-settling.js';
import { storedWindow, windowOpening } from '../settings/send-window.js';
import type { MessageStatusChanges, StatusChange } from './message-status-changes.js';
import { EXPIRED } from './message-timing.js';

/** Due messages taken per round; a full round is followed at once by the next. */
const RELEASE_BATCH = 1_000;

interface DueMessage {
  id: string;
  to: string;
  campaign_id: string | null;
  contact_id: string | null;
  expires_at: Date | null;
  campaign_status: string | null;
  campaign_deleted: boolean | null;
  campaign_window: unknown;
  account_window: unknown;
  contact_timezone: string | null;
  account_timezone: string | null;
}

export interface ScheduledReleasesOptions {
  prisma: PrismaClient;
  clock: Clock;
  statusChanges: MessageStatusChanges;
  sendJobs: MessageSendJobs;
  /** A running campaign whose waiting messages moved gets a dispatch, which finishes it once none waits (campaign-settling.ts). */
  dispatchJobs: CampaignDispatchJobs;
  logger: Logger;
  pollMs: number;
}

/**
 * Releases scheduled messages when they are due: a loop in every worker process asks one index
 * (of the messages still waiting, by when they are due) for those due now, so a million
 * scheduled messages cost one index probe per round until they are due. Each due message is
 * released (queued, and handed to the send queue), or failed as expired, or, for a campaign's
 * message, kept waiting: until its window opens again (the window is read anew, in the contact's
 * time zone) or, while its campaign is paused, until it expires. A release and a cancellation
 * racing for one message are decided by its row lock in the status change: one of them wins.
 */
export class ScheduledReleases {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly statusChanges: MessageStatusChanges;
  private readonly sendJobs: MessageSendJobs;
  private readonly dispatchJobs: CampaignDispatchJobs;
  private readonly loop: PollingLoop;

  constructor(options: ScheduledReleasesOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      statusChanges: this.statusChanges,
      sendJobs: this.sendJobs,
      dispatchJobs: this.dispatchJobs,
    } = options);
    this.loop = new PollingLoop({
      step: () => this.releaseDue(),
      batch: RELEASE_BATCH,
      pollMs: options.pollMs,
      logger: options.logger,
      failure: 'scheduled messages could not be released; trying again',
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Handles one round of due messages; answers how many it took. */
  async releaseDue(): Promise<number> {
    const now = this.clock.now();
    const due = await this.prisma.$queryRaw<DueMessage[]>`
      SELECT m.id, m."to", m.campaign_id, m.contact_id, m.expires_at,
        c.status::text AS campaign_status, c.deleted_at IS NOT NULL AS campaign_deleted, c.send_window AS campaign_window, s.send_window AS account_window,
        ct.timezone AS contact_timezone, s.timezone AS account_timezone
      FROM messages m
      LEFT JOIN campaigns c ON c.id = m.campaign_id
      LEFT JOIN contacts ct ON ct.id = m.contact_id
      LEFT JOIN account_settings s ON s.account_id = m.account_id
      WHERE m.release_at <= ${now}
      ORDER BY m.release_at
      LIMIT ${RELEASE_BATCH}`;
    if (due.length === 0) return 0;
    const later: { id: string; at: Date | null }[] = [];
    const changes = due.flatMap((message): StatusChange[] => {
      const subject = { id: message.id, to: message.to, campaignId: message.campaign_id };
      if (message.expires_at && message.expires_at.getTime() <= now.getTime())
        return [{ message: subject, status: 'failed', at: now, error: EXPIRED }];
      if (message.campaign_status === 'cancelled' || message.campaign_deleted)
        return [{ message: subject, status: 'cancelled', at: now }];
      const wait = waitUntil(message, now);
      if (wait === 'now') return [{ message: subject, status: 'queued', at: now }];
      later.push({ id: message.id, at: wait });
      return [];
    });
    await this.postpone(later);
    const moved = await Promise.all(changes.map((change) => this.statusChanges.apply(change)));
    await this.sendJobs.enqueue(
      changes.filter((change, index) => moved[index] && change.status === 'queued').map((c) => c.message.id),
    );
    // A running campaign stays running while messages of it wait: those whose waiting messages moved may finish.
    await settleWaitingCampaigns(
      this.prisma,
      this.dispatchJobs,
      changes.flatMap((change, index) =>
        moved[index] && change.message.campaignId ? [change.message.campaignId] : [],
      ),
    );
    return due.length;
  }

  /** Messages that stay scheduled get their new due time (null: none until resumed), only while still scheduled. */
  private async postpone(later: { id: string; at: Date | null }[]): Promise<void> {
    if (later.length === 0) return;
    await this.prisma.$executeRaw`
      UPDATE messages m SET release_at = v.at
      FROM unnest(${later.map((l) => l.id)}::text[], ${later.map((l) => l.at?.toISOString() ?? null)}::timestamptz[]) AS v(id, at)
      WHERE m.id = v.id AND m.status = 'scheduled'`;
  }
}

/**
 * Whether a due message goes now, or until when it waits: a paused campaign's until it expires
 * (null, none, if it never does; resuming makes it due again), a campaign message outside its
 * window until the window opens (or it expires, whichever is first).
 */
function waitUntil(message: DueMessage, now: Date): 'now' | Date | null {
  if (!message.campaign_id || !message.contact_id) return 'now';
  if (message.campaign_status === 'paused') return message.expires_at;
  const window = storedWindow(message.campaign_window) ?? storedWindow(message.account_window);
  const opening = windowOpening(now, window, message.contact_timezone ?? message.account_timezone ?? 'UTC');
  if (opening.getTime() <= now.getTime()) return 'now';
  return message.expires_at && message.expires_at < opening ? message.expires_at : opening;
}
