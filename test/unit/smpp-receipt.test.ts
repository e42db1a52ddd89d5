import type { PDU } from 'smpp';
import { describe, expect, it } from 'vitest';
import { isDeliveryReceipt, parseReceipt } from '../../src/carriers/smpp/smpp-receipt.js';

const pdu = (fields: Partial<PDU>) => fields as PDU;
const receiptText = (stat: string, err = '000') =>
  `id:A1B2C3 sub:001 dlvrd:001 submit date:2611211000 done date:2611211001 stat:${stat} err:${err} text:Hello`;

describe('SMPP receipt parsing', () => {
  it('reads the id and outcome of the de-facto receipt text', () => {
    expect(parseReceipt(pdu({ esm_class: 0x04, short_message: receiptText('DELIVRD') }))).toEqual({
      smscMessageId: 'A1B2C3',
      outcome: { delivered: true },
    });
    expect(
      parseReceipt(
        pdu({ esm_class: 0x04, short_message: Buffer.from(receiptText('UNDELIV', '012'), 'latin1') }),
      ),
    ).toEqual({
      smscMessageId: 'A1B2C3',
      outcome: {
        delivered: false,
        code: 'undeliverable',
        message: 'The SMSC reported UNDELIV: the message could not be delivered (err 012)',
      },
    });
  });

  it('prefers the receipted_message_id and message_state TLVs to the text', () => {
    const fields = {
      esm_class: 0x04,
      receipted_message_id: 'tlv-id',
      message_state: 8,
      short_message: receiptText('DELIVRD'),
    };
    expect(parseReceipt(pdu(fields))).toMatchObject({
      smscMessageId: 'tlv-id',
      outcome: { delivered: false, code: 'rejected' },
    });
  });

  it('has no outcome for a state that is not final, and no receipt for text it cannot read', () => {
    expect(parseReceipt(pdu({ esm_class: 0x04, short_message: receiptText('ENROUTE') }))).toEqual({
      smscMessageId: 'A1B2C3',
      outcome: null,
    });
    expect(parseReceipt(pdu({ esm_class: 0x04, receipted_message_id: 'x', message_state: 6 }))).toEqual({
      smscMessageId: 'x',
      outcome: null,
    });
    expect(parseReceipt(pdu({ esm_class: 0x04, short_message: 'delivered, thanks' }))).toBeNull();
  });

  it('tells a receipt from a reply by esm_class or the receipted_message_id TLV', () => {
    expect(isDeliveryReceipt(pdu({ esm_class: 0x04 }))).toBe(true);
    expect(isDeliveryReceipt(pdu({ esm_class: 0x00, receipted_message_id: 'x' }))).toBe(true);
    expect(isDeliveryReceipt(pdu({ esm_class: 0x40, short_message: 'STOP' }))).toBe(false);
  });
});
