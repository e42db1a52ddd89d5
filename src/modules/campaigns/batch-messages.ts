import { analyzeText } from '../../carriers/encoding.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import type { FraudGuard } from '../fraud-guard/fraud-guard.js';
import type { NewMessageRow } from '../messages/message-rows.js';
import { messageTiming, type TimingRules, timingRulesOf } from '../messages/message-timing.js';
import { type AccountQuotas, isAllowedDestination } from '../quotas/account-quotas.js';
import { NO_COMPLIANT_SENDER, type SenderChoice } from '../senders/sender-choice.js';
import { renderTemplate } from '../templates/render-template.js';
import type { LockedCampaign } from './campaign-rows.js';
import type { PendingContact } from './pending-contacts.js';

type Tx = Prisma.TransactionClient;

export interface BatchMessagesOptions {
  quotas: AccountQuotas;
  senderChoice: SenderChoice;
  fraudGuard: FraudGuard;
}

/** The messages of a campaign's batch, made for its contacts before any of them is stored. */
export class BatchMessages {
  constructor(private readonly options: BatchMessagesOptions) {}

  /**
   * The batch's messages, rendered and timed; those to a country the account may not send to
   * are made failed (`destination_not_allowed`), then those no sender may take there
   * (`no_compliant_sender`) and those the fraud guard refuses (`fraud_blocked`), before any is
   * reserved, so the campaign's stats count them and the quota does not.
   */
  async make(
    tx: Tx,
    campaign: LockedCampaign,
    template: string,
    contacts: PendingContact[],
    now: Date,
  ): Promise<NewMessageRow[]> {
    const [timing, allowed] = await Promise.all([
      timingRulesOf(tx, campaign.account_id, {
        window: campaign.send_window,
        validitySeconds: campaign.validity,
      }),
      this.options.quotas.allowedCountries(campaign.account_id),
    ]);
    const messages = campaignMessages(campaign, template, contacts, timing, now).map((message) =>
      isAllowedDestination(allowed, message.to)
        ? message
        : failedAtAcceptance(message, {
            code: 'destination_not_allowed',
            message: 'The account may not send to this country',
          }),
    );
    return this.withinFraudGuard(await this.withSenders(tx, campaign, messages));
  }

  /**
   * Those the fraud guard refuses are made failed (`fraud_blocked`). Checked last, so that only
   * messages that would otherwise go count in its windows.
   */
  private withinFraudGuard(messages: NewMessageRow[]): Promise<NewMessageRow[]> {
    return Promise.all(
      messages.map(async (message) => {
        if (message.status === 'failed') return message;
        const rule = await this.options.fraudGuard.check(message);
        if (!rule) return message;
        return failedAtAcceptance(message, {
          code: 'fraud_blocked',
          message: `Refused by the fraud guard: ${rule}`,
        });
      }),
    );
  }

  /**
   * Each message's sender: the campaign's `from`, else the account's default sender or pool
   * (sticky per recipient, written in the batch's transaction). A message no sender of them may
   * take to its country is made failed (`no_compliant_sender`).
   */
  private async withSenders(tx: Tx, campaign: LockedCampaign, messages: NewMessageRow[]) {
    const going = messages.filter((message) => message.status !== 'failed');
    if (going.length === 0) return messages;
    const senders = await this.options.senderChoice.choose(
      tx,
      campaign.account_id,
      campaign.sender,
      going.map((message) => message.to),
    );
    const senderOf = new Map(going.map((message, index) => [message.id, senders[index]!]));
    return messages.map((message) => {
      const sender = senderOf.get(message.id);
      if (sender === undefined) return message;
      return sender === 'refused' ? failedAtAcceptance(message, NO_COMPLIANT_SENDER) : { ...message, sender };
    });
  }
}

/** A message of the batch refused as it is made: failed at once, with why. */
function failedAtAcceptance(message: NewMessageRow, error: { code: string; message: string }): NewMessageRow {
  return { ...message, status: 'failed', releaseAt: null, error };
}

/**
 * A batch's messages: the template rendered for each contact, each going at once when the
 * contact's window is open and otherwise scheduled for its next opening in the contact's time
 * zone; each expires its validity after it may first go out.
 */
function campaignMessages(
  campaign: LockedCampaign,
  template: string,
  contacts: PendingContact[],
  rules: TimingRules,
  now: Date,
): NewMessageRow[] {
  return contacts.map((contact) => {
    const text = renderTemplate(template, contact);
    const { encoding, segments } = analyzeText(text);
    const timing = messageTiming({ now, sendAt: null, rules, timeZone: contact.timezone });
    return {
      id: newId('msg'),
      accountId: campaign.account_id,
      campaignId: campaign.id,
      contactId: contact.id,
      to: contact.phone,
      text,
      encoding,
      segments,
      createdAt: now,
      status: timing.status,
      sendAt: null,
      releaseAt: timing.releaseAt,
      validitySeconds: rules.validitySeconds,
    };
  });
}
