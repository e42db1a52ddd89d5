import { describe, expect, it } from 'vitest';
import { analyzeText } from '../../src/carriers/encoding.js';
import { concatenationUdh, readConcatenation, submitBodies } from '../../src/carriers/smpp/smpp-segments.js';

const withoutUdh = (shortMessage: Buffer) => shortMessage.subarray(6);

describe('encoding and segments', () => {
  it('counts GSM-7 texts as one SMS up to 160 septets and 153 per part beyond', () => {
    expect(analyzeText('')).toEqual({ encoding: 'GSM-7', segments: 0, characters: 0, ucs2Characters: [] });
    expect(analyzeText('a'.repeat(160))).toMatchObject({ encoding: 'GSM-7', segments: 1 });
    expect(analyzeText('a'.repeat(161))).toMatchObject({ encoding: 'GSM-7', segments: 2 });
    expect(analyzeText('a'.repeat(306))).toMatchObject({ segments: 2 });
    expect(analyzeText('a'.repeat(307))).toMatchObject({ segments: 3 });
  });

  it('counts an extension character as two septets and never splits it from its escape', () => {
    expect(analyzeText('€'.repeat(80))).toMatchObject({ encoding: 'GSM-7', segments: 1, characters: 80 });
    expect(analyzeText('€'.repeat(81))).toMatchObject({ encoding: 'GSM-7', segments: 2 });
    const text = `${'a'.repeat(152)}€${'b'.repeat(10)}`;
    const parts = submitBodies(text, 'GSM-7', 'udh', 9).map((body) => withoutUdh(body.shortMessage));
    expect(parts.map((part) => part.length)).toEqual([152, 12]);
    expect([...parts[1]!.subarray(0, 2)]).toEqual([0x1b, 0x65]);
  });

  it('makes a text UCS-2 for any character outside GSM 03.38, counting an emoji as two units it never splits', () => {
    expect(analyzeText('Voilà, ça va? 😀')).toMatchObject({ encoding: 'UCS-2', ucs2Characters: ['ç', '😀'] });
    expect(analyzeText('😀'.repeat(35))).toMatchObject({ encoding: 'UCS-2', segments: 1, characters: 35 });
    expect(analyzeText('😀'.repeat(36))).toMatchObject({ encoding: 'UCS-2', segments: 2 });
    const parts = submitBodies(`x${'😀'.repeat(40)}`, 'UCS-2', 'udh', 9).map((body) =>
      withoutUdh(body.shortMessage),
    );
    // 67 units a part: the x and 33 emoji (67), then 7 emoji; no surrogate pair cut in two.
    expect(parts.map((part) => part.length / 2)).toEqual([67, 14]);
  });

  it('gives the carrier as many parts as the segments the API reports', () => {
    for (const unit of ['a', '€', 'ç', '😀', 'a€', 'a😀']) {
      for (let repeat = 1; repeat <= 400; repeat += 7) {
        const text = unit.repeat(repeat);
        const { encoding, segments } = analyzeText(text);
        expect(submitBodies(text, encoding, 'udh', 1), `${encoding} ${repeat}×${unit}`).toHaveLength(
          segments,
        );
      }
    }
  });

  it('writes GSM-7 as unpacked septets with the escape before extension characters, UCS-2 as UTF-16BE', () => {
    const [gsm] = submitBodies('@£A€', 'GSM-7', 'udh', 1);
    expect(gsm).toMatchObject({ part: 1, parts: 1, dataCoding: 0x00, esmClass: 0, messagePayload: null });
    expect([...gsm!.shortMessage]).toEqual([0x00, 0x01, 0x41, 0x1b, 0x65]);
    const [ucs2] = submitBodies('é😀', 'UCS-2', 'udh', 1);
    expect(ucs2).toMatchObject({ dataCoding: 0x08 });
    expect(ucs2!.shortMessage.toString('hex')).toBe('00e9d83dde00');
  });

  it('sends a long text as UDH parts with one reference, or whole in message_payload', () => {
    const text = 'a'.repeat(200);
    const parts = submitBodies(text, 'GSM-7', 'udh', 300);
    expect(parts.map((body) => [...body.shortMessage.subarray(0, 6)])).toEqual([
      [0x05, 0x00, 0x03, 300 & 0xff, 2, 1],
      [0x05, 0x00, 0x03, 300 & 0xff, 2, 2],
    ]);
    expect(parts.every((body) => body.esmClass === 0x40)).toBe(true);
    const [payload, ...rest] = submitBodies(text, 'GSM-7', 'payload', 300);
    expect(rest).toEqual([]);
    expect(payload).toMatchObject({ parts: 1, esmClass: 0, shortMessage: Buffer.alloc(0) });
    expect(payload!.messagePayload!.toString('latin1')).toBe(text);
  });

  it('reads the concatenation element of a received UDH, 8-bit or 16-bit reference', () => {
    expect(readConcatenation([concatenationUdh(7, 3, 2).subarray(1)])).toEqual({
      reference: 7,
      parts: 3,
      part: 2,
    });
    expect(readConcatenation([Buffer.from([0x08, 0x04, 0x01, 0x2c, 2, 1])])).toEqual({
      reference: 300,
      parts: 2,
      part: 1,
    });
    expect(readConcatenation([Buffer.from([0x24, 0x01, 0x00])])).toBeNull();
  });
});
