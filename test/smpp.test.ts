import { Writable } from 'node:stream';
import pino from 'pino';
import smpp from 'smpp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CarrierRejectedError,
  CarrierUnavailableError,
  type DeliveryReport,
  type InboundSms,
  type OutboundSms,
} from '../src/carriers/carrier.js';
import { analyzeText } from '../src/carriers/encoding.js';
import { SmppCarrier, type SmppCarrierOptions } from '../src/carriers/smpp/smpp-carrier.js';
import { submitBodies } from '../src/carriers/smpp/smpp-segments.js';
import { ConfigError } from '../src/config/environment.js';
import { loadConfig } from '../src/config.js';
import { createPool, createPrismaClient } from '../src/db/prisma.js';
import type { PrismaClient } from '../src/generated/prisma/client.js';
import { systemClock } from '../src/lib/clock.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { LoopbackSmsc, MESSAGE_PAYLOAD_TAG } from './support/smsc.js';
import { waitFor } from './support/wait.js';

let database: TestDatabase;
let prisma: PrismaClient;
const running: { carrier: SmppCarrier; smsc: LoopbackSmsc }[] = [];
let references = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  prisma = createPrismaClient(createPool(database.url, 5));
});

afterEach(async () => {
  for (const { carrier, smsc } of running.splice(0)) {
    await carrier.stop();
    await smsc.close();
  }
});

afterAll(async () => {
  await prisma.$disconnect();
  await database.drop();
});

interface Harness {
  smsc: LoopbackSmsc;
  carrier: SmppCarrier;
  reports: DeliveryReport[];
  inbound: InboundSms[];
  logs: string[];
  /** While `failReports`, every report the carrier hands over is refused, and counted in `refusedReports`. */
  sink: { failInbound: boolean; failReports: boolean; refusedReports: number };
}

async function connect(
  options: Partial<SmppCarrierOptions> = {},
  credentials: { password?: string } = {},
): Promise<Harness> {
  const smsc = await LoopbackSmsc.start('tern', 'secret');
  const logs: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    }),
  );
  const carrier = new SmppCarrier(prisma, systemClock, logger, {
    host: '127.0.0.1',
    port: smsc.port,
    tls: false,
    systemId: 'tern',
    password: credentials.password ?? 'secret',
    systemType: 'tern',
    sourceAddr: null,
    window: 10,
    concatenation: 'udh',
    enquireLinkMs: 30_000,
    responseTimeoutMs: 1_000,
    reconnectMs: 50,
    throttleBackoffMs: 20,
    maxPerSecond: null,
    receiptPollMs: 100,
    sendDeadlineMs: 5_000,
    ...options,
  });
  const reports: DeliveryReport[] = [];
  const inbound: InboundSms[] = [];
  const sink = { failInbound: false, failReports: false, refusedReports: 0 };
  await carrier.start({
    deliveryReport: async (report) => {
      if (sink.failReports) {
        sink.refusedReports += 1;
        throw new Error('database away');
      }
      reports.push(report);
    },
    inbound: async (message) => {
      if (sink.failInbound) throw new Error('database away');
      inbound.push(message);
    },
  });
  running.push({ carrier, smsc });
  return { smsc, carrier, reports, inbound, logs, sink };
}

function message(fields: Partial<OutboundSms> = {}): OutboundSms {
  references += 1;
  return {
    reference: `msg_test${references}`,
    to: '447700900123',
    text: 'Hello',
    encoding: 'GSM-7',
    segments: 1,
    from: 'Tern',
    validUntil: null,
    ...fields,
  };
}

const septets = (...codes: number[]) => Buffer.from(codes);
const gsm = (text: string) => Buffer.from(text, 'latin1'); // for A-Z, a-z, digits and space the GSM-7 code is the ASCII one

describe('binding', () => {
  it('binds as a transceiver with the configured credentials and system type', async () => {
    const { smsc, carrier } = await connect();
    expect(carrier.health()).toMatchObject({
      carrier: 'smpp',
      state: 'bound',
      window: { inUse: 0, size: 10 },
    });
    const bind = smsc.received.find((entry) => entry.command === 'bind_transceiver')!.pdu;
    expect(bind).toMatchObject({
      system_id: 'tern',
      password: 'secret',
      system_type: 'tern',
      interface_version: 0x34,
    });
  });

  it('with a wrong password: start-up goes on, health names the refusal, sends are retried not failed, the password is never logged', async () => {
    const { carrier, smsc, logs } = await connect({}, { password: 'wrongpw' });
    await waitFor(async () => (carrier.health().errors!.bindFailures! >= 2 ? true : null));
    expect(carrier.health()).toMatchObject({
      state: 'bind_failed',
      lastError: expect.stringContaining('ESME_RINVPASWD'),
    });
    await expect(carrier.send(message())).rejects.toBeInstanceOf(CarrierUnavailableError);
    expect(smsc.submitsReceived()).toHaveLength(0);
    expect(logs.join('\n')).toContain('bind_failed');
    expect(logs.join('\n')).not.toContain('wrongpw');
  });

  it('keeps the link alive with enquire_link', async () => {
    const { smsc } = await connect({ enquireLinkMs: 100 });
    await waitFor(
      async () =>
        smsc.received.filter((entry) => entry.command === 'enquire_link').length >= 2 ? true : null,
      3_000,
    );
  });
});

describe('submit_sm, PDU by PDU', () => {
  it('GSM-7 in one part: data_coding 0, unpacked septets with escaped extension characters, alphanumeric sender, receipt requested', async () => {
    const { smsc, carrier } = await connect();
    const result = await carrier.send(message({ text: 'Hi {x} €5', from: 'Tern' }));
    expect(result).toEqual({ carrierMessageId: smsc.messageId(1) });
    const [submit, ...others] = smsc.submitsReceived();
    expect(others).toHaveLength(0);
    expect(submit).toMatchObject({
      sourceTon: 5,
      sourceNpi: 0,
      source: 'Tern',
      destTon: 1,
      destNpi: 1,
      destination: '447700900123',
    });
    expect(submit).toMatchObject({ esmClass: 0, registeredDelivery: 1, dataCoding: 0 });
    expect(submit!.shortMessage).toEqual(
      Buffer.concat([
        gsm('Hi '),
        septets(0x1b, 0x28),
        gsm('x'),
        septets(0x1b, 0x29, 0x20, 0x1b, 0x65),
        gsm('5'),
      ]),
    );
  });

  it('gives the SMSC the validity the message has left, in relative form, and none for a message without one', async () => {
    const { smsc, carrier } = await connect();
    const validUntil = new Date(Date.now() + (26 * 3600 + 5 * 60 + 7) * 1000 + 500);
    await carrier.send(message({ validUntil }));
    await carrier.send(message({ validUntil: null }));
    const [bounded, unbounded] = smsc.submitsReceived();
    // 1 day, 2 hours, 5 minutes and 7 seconds (rounded down, less what the send itself took), relative.
    expect(bounded!.validityPeriod).toMatch(/^0000010205(07|06)000R$/);
    expect(unbounded!.validityPeriod).toBe('');
  });

  it('GSM-7 in two parts: UDH with one reference, esm_class 0x40, an escape pair never split, short-code sender', async () => {
    const { smsc, carrier } = await connect();
    const text = `${'a'.repeat(152)}€${'b'.repeat(60)}`;
    await carrier.send(message({ text, segments: 2, from: '12345' }));
    const submits = smsc.submitsReceived();
    expect(submits).toHaveLength(2);
    const reference = submits[0]!.shortMessage[3]!;
    submits.forEach((submit, index) => {
      expect(submit).toMatchObject({
        sourceTon: 3,
        sourceNpi: 0,
        source: '12345',
        esmClass: 0x40,
        dataCoding: 0,
        registeredDelivery: 1,
      });
      expect([...submit.shortMessage.subarray(0, 6)]).toEqual([0x05, 0x00, 0x03, reference, 2, index + 1]);
    });
    expect(submits[0]!.shortMessage.subarray(6)).toEqual(gsm('a'.repeat(152)));
    expect(submits[1]!.shortMessage.subarray(6)).toEqual(
      Buffer.concat([septets(0x1b, 0x65), gsm('b'.repeat(60))]),
    );
  });

  it('UCS-2 in one part: data_coding 8, UTF-16BE, an international sender without its +', async () => {
    const { smsc, carrier } = await connect();
    await carrier.send(message({ text: 'Olá 😀 Привет', encoding: 'UCS-2', from: '+447700900999' }));
    const [submit] = smsc.submitsReceived();
    expect(submit).toMatchObject({
      sourceTon: 1,
      sourceNpi: 1,
      source: '447700900999',
      dataCoding: 8,
      esmClass: 0,
    });
    expect(submit!.shortMessage).toEqual(Buffer.from('Olá 😀 Привет', 'utf16le').swap16());
  });

  it('UCS-2 in two parts of at most 67 units, a surrogate pair never split', async () => {
    const { smsc, carrier } = await connect();
    await carrier.send(
      message({ text: `${'Ж'.repeat(66)}😀${'Ж'.repeat(10)}`, encoding: 'UCS-2', segments: 2 }),
    );
    const submits = smsc.submitsReceived();
    expect(
      submits.map((submit) => [
        submit.dataCoding,
        submit.esmClass,
        submit.shortMessage[4],
        submit.shortMessage[5],
      ]),
    ).toEqual([
      [8, 0x40, 2, 1],
      [8, 0x40, 2, 2],
    ]);
    expect(submits[0]!.shortMessage.subarray(6)).toEqual(Buffer.from('Ж'.repeat(66), 'utf16le').swap16());
    expect(submits[1]!.shortMessage.subarray(6)).toEqual(
      Buffer.from(`😀${'Ж'.repeat(10)}`, 'utf16le').swap16(),
    );
  });

  it('with SMPP_CONCAT=payload a long message is one submit_sm carrying message_payload', async () => {
    const { smsc, carrier } = await connect({ concatenation: 'payload' });
    const text = 'x'.repeat(300);
    await carrier.send(message({ text, segments: 2 }));
    const submits = smsc.submitsReceived();
    expect(submits).toHaveLength(1);
    expect(submits[0]).toMatchObject({ esmClass: 0, dataCoding: 0 });
    expect(submits[0]!.shortMessage).toHaveLength(0);
    expect(submits[0]!.tlvs.get(MESSAGE_PAYLOAD_TAG)).toEqual(gsm(text));
  });

  it('cuts every text into as many parts as the segments the API reported', () => {
    const pieces = ['a', '€', '{', 'ж', '😀', ' ', 'Hello world. '];
    for (let length = 1; length <= 700; length += 7) {
      for (const [index, piece] of pieces.entries()) {
        const text = Array.from({ length }, (_, position) => (position % (index + 2) === 0 ? piece : 'x'))
          .join('')
          .slice(0, 1600);
        const { encoding, segments } = analyzeText(text);
        expect(submitBodies(text, encoding, 'udh', 7), `${encoding} ${text.length}`).toHaveLength(segments);
      }
    }
  });

  it('falls back to SMPP_SOURCE_ADDR when the account has no sender', async () => {
    const { smsc, carrier } = await connect({ sourceAddr: 'Acme' });
    await carrier.send(message({ from: null }));
    expect(smsc.submitsReceived()[0]).toMatchObject({ sourceTon: 5, source: 'Acme' });
  });
});

describe('flow control', () => {
  it('answers ESME_RTHROTTLED by backing off and submitting the same part again', async () => {
    const { smsc, carrier } = await connect();
    smsc.behaviour = (n) => (n <= 2 ? { status: smpp.errors.ESME_RTHROTTLED! } : 'ok');
    await expect(carrier.send(message({ text: 'Slowly' }))).resolves.toEqual({
      carrierMessageId: smsc.messageId(1),
    });
    expect(smsc.submitsReceived()).toHaveLength(3);
    expect(smsc.accepted).toHaveLength(1);
    expect(carrier.health().errors).toMatchObject({ throttled: 2 });
  });

  it('slows the whole bind to what a throttling SMSC takes, losing and duplicating nothing', async () => {
    const { smsc, carrier } = await connect({ window: 10, sendDeadlineMs: 60_000 });
    // The SMSC takes 100 submit_sm per second of its own clock and throttles the rest.
    const RATE = 100;
    let second = 0;
    let takenThisSecond = 0;
    smsc.behaviour = () => {
      const now = Math.floor(Date.now() / 1000);
      if (now !== second) {
        second = now;
        takenThisSecond = 0;
      }
      if (takenThisSecond >= RATE) return { status: smpp.errors.ESME_RTHROTTLED! };
      takenThisSecond += 1;
      return 'ok';
    };
    const sends = Array.from({ length: 400 }, (_, index) =>
      carrier.send(message({ reference: `msg_paced${index}`, text: `Paced ${index}` })),
    );
    const results = await Promise.all(sends);

    const texts = smsc.accepted.map((accepted) => accepted.submit.shortMessage.toString('latin1'));
    expect(new Set(texts).size).toBe(400);
    expect(texts).toHaveLength(400);
    expect(new Set(results.map((result) => result.carrierMessageId)).size).toBe(400);
    // A bind that only paused the throttled part would keep meeting the limit with the other nine
    // of its window, throttled several times for each message; one that paces itself is throttled
    // only when it probes above the SMSC's rate. What an operator sees in /health: throttles, but
    // fewer than the messages sent. (A bound in messages, not in time: a slow host throttles less.)
    const throttled = carrier.health().errors?.throttled ?? 0;
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThan(texts.length);
  });

  it('fails a message the SMSC refuses, naming the SMPP status', async () => {
    const { smsc, carrier } = await connect();
    smsc.behaviour = () => ({ status: smpp.errors.ESME_RINVDSTADR! });
    const error = await carrier.send(message()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CarrierRejectedError);
    expect(error).toMatchObject({
      code: 'smpp_0x0000000b',
      message: expect.stringContaining('ESME_RINVDSTADR'),
    });
  });

  it('never has more submit_sm outstanding than the window', async () => {
    const { smsc, carrier } = await connect({ window: 3, responseTimeoutMs: 30_000 });
    let outstanding = 0;
    let received = 0;
    let most = 0;
    smsc.behaviour = async () => {
      outstanding += 1;
      received += 1;
      most = Math.max(most, outstanding);
      // A slow SMSC that holds its answers until the window is full (or every send is in): the
      // sends waiting for a slot have had their chance to overrun it while these wait, however
      // slow the host. A bind with a smaller window never fills it; the hold then ends at the
      // bound, and `most` says so.
      await waitFor(async () => (outstanding >= 3 || received === 12 ? true : null), 10_000, 5).catch(
        () => undefined,
      );
      outstanding -= 1;
      return 'ok' as const;
    };
    await Promise.all(Array.from({ length: 12 }, () => carrier.send(message())));
    expect(smsc.accepted).toHaveLength(12);
    expect(most).toBe(3);
  });

  it('gives a message back to the queue rather than wait for the window past its deadline', async () => {
    const { smsc, carrier } = await connect({ window: 1, sendDeadlineMs: 200, responseTimeoutMs: 30_000 });
    // The SMSC answers the submit in the window only once the other send has given up: a slow
    // peer, slow exactly as long as the scenario needs. A bind that waited past the deadline would
    // never give up, and the test would fail at its time limit.
    let gaveUp: () => void = () => undefined;
    const oneGaveUp = new Promise<void>((resolve) => {
      gaveUp = resolve;
    });
    smsc.behaviour = async () => {
      await oneGaveUp;
      return 'ok' as const;
    };
    const send = () =>
      carrier.send(message()).catch((error: unknown) => {
        gaveUp();
        throw error;
      });
    const outcomes = await Promise.allSettled([send(), send()]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.status === 'rejected' && refused.reason).toBeInstanceOf(CarrierUnavailableError);
    expect(smsc.submitsReceived()).toHaveLength(1);
  });

  it('keeps the pace of CARRIER_MAX_PER_SECOND', async () => {
    const { smsc, carrier } = await connect({ maxPerSecond: 20 });
    const asked = Date.now();
    await Promise.all(Array.from({ length: 6 }, () => carrier.send(message())));
    expect(smsc.accepted).toHaveLength(6);
    // What the SMSC sees: six submits asked for at once reach it one pace interval (50 ms) apart,
    // so the sixth comes no sooner than five intervals after they were asked for. A lower bound
    // only: a slow host delays the submits, it never brings them closer.
    const arrivals = smsc.received.filter((entry) => entry.command === 'submit_sm').map((entry) => entry.at);
    expect(arrivals).toHaveLength(6);
    expect(Math.max(...arrivals) - asked).toBeGreaterThanOrEqual(5 * 50 - 10);
  });

  it('loses and repeats nothing when the connection drops mid-window: unanswered parts are sent again after the reconnect', async () => {
    const { smsc, carrier } = await connect();
    let dropped = false;
    smsc.behaviour = (n) => {
      if (dropped || n <= 3) return 'ok';
      if (n === 6) {
        dropped = true;
        setTimeout(() => smsc.dropConnections(), 20);
      }
      return 'silent';
    };
    const outbound = [
      ...Array.from({ length: 5 }, (_, index) =>
        message({ to: `44770090010${index}`, text: `Message ${index}` }),
      ),
      message({ to: '447700900200', text: 'y'.repeat(400), segments: 3 }),
    ];
    const firstRound = await Promise.allSettled(outbound.map((sms) => carrier.send(sms)));
    const interrupted = outbound.filter((_, index) => firstRound[index]!.status === 'rejected');
    expect(interrupted.length).toBeGreaterThan(0);
    for (const result of firstRound)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(CarrierUnavailableError);
    // What the send worker does with CarrierUnavailableError: the same message again, later.
    await waitFor(async () => (carrier.health().state === 'bound' ? true : null));
    await Promise.all(interrupted.map((sms) => carrier.send(sms)));

    const acceptedParts = smsc.accepted.map(
      ({ submit }) => `${submit.destination}/${submit.shortMessage.subarray(0, 6).toString('hex')}`,
    );
    expect(new Set(acceptedParts).size).toBe(acceptedParts.length);
    expect(smsc.accepted).toHaveLength(5 + 3);
    expect(
      new Set(
        smsc.accepted
          .filter(({ submit }) => submit.destination === '447700900200')
          .map(({ submit }) => submit.shortMessage[3]),
      ).size,
    ).toBe(1);
    expect(smsc.submitsReceived().length).toBeGreaterThan(8);
    expect(carrier.health().errors).toMatchObject({ disconnects: 1 });
  });
});

describe('slow answers', () => {
  it('takes an answer that came while the process was too busy to read it before the response timeout, and submits nothing twice', async () => {
    const { smsc, carrier, reports } = await connect({ responseTimeoutMs: 60 });
    smsc.autoReceipt = 'tlv';
    // The SMSC answers the first submit in time, but holds the whole process (Tern with it) past
    // Tern's response timeout first: the answer waits on the socket when Tern's timer comes due.
    smsc.behaviour = (n) => {
      if (n === 1) stallEventLoop(90);
      return 'ok';
    };
    const sms = message();
    const { carrierMessageId } = await sendAsTheWorkerDoes(carrier, sms);
    expect(smsc.submitsReceived()).toHaveLength(1);
    expect(smsc.accepted).toHaveLength(1);
    expect(carrierMessageId).toBe(smsc.accepted[0]!.messageId);
    expect(
      await waitFor(async () => reports.find((report) => report.reference === sms.reference)),
    ).toMatchObject({ status: 'delivered', carrierMessageId });
    expect(carrier.health().errors).toMatchObject({ responseTimeouts: 0, disconnects: 0 });
  });

  it('takes an answer that an SMSC held up with the process wrote after the response timer came due', async () => {
    const { smsc, carrier } = await connect({ responseTimeoutMs: 60 });
    // The process stalls once Tern's submit is out, before the SMSC (in this process) has read
    // it: Tern's timer comes due before the SMSC has even answered.
    const send = smpp.Session.prototype.send;
    let stalled = false;
    smpp.Session.prototype.send = function (this: smpp.Session, ...args: Parameters<typeof send>) {
      const sent = send.apply(this, args);
      if (args[0].command === 'submit_sm' && !stalled) {
        stalled = true;
        setImmediate(() => stallEventLoop(90));
      }
      return sent;
    };
    try {
      const { carrierMessageId } = await sendAsTheWorkerDoes(carrier, message());
      expect(smsc.submitsReceived()).toHaveLength(1);
      expect(carrierMessageId).toBe(smsc.accepted[0]!.messageId);
    } finally {
      smpp.Session.prototype.send = send;
    }
  });

  it('waits for the answer of a submit already out past the send deadline: the late answer is the message id, nothing is sent twice', async () => {
    const { smsc, carrier, reports } = await connect({ sendDeadlineMs: 50, responseTimeoutMs: 5_000 });
    smsc.autoReceipt = 'tlv';
    smsc.behaviour = async () => {
      await new Promise((resolve) => setTimeout(resolve, 80));
      return 'ok' as const;
    };
    const sms = message();
    const { carrierMessageId } = await sendAsTheWorkerDoes(carrier, sms);
    expect(smsc.submitsReceived()).toHaveLength(1);
    expect(carrierMessageId).toBe(smsc.accepted[0]!.messageId);
    expect(
      await waitFor(async () => reports.find((report) => report.reference === sms.reference)),
    ).toMatchObject({ status: 'delivered', carrierMessageId });
  });

  it('submits a part again on the same bind once its answer never came within the response timeout', async () => {
    const { smsc, carrier } = await connect({ responseTimeoutMs: 60 });
    // As SMPP has it: an SMSC keeps no submit it never answered (docs/carriers.md, Limits).
    smsc.behaviour = (n) => (n === 1 ? 'silent' : 'ok');
    const { carrierMessageId } = await sendAsTheWorkerDoes(carrier, message());
    expect(smsc.submitsReceived()).toHaveLength(2);
    expect(smsc.accepted.map((entry) => entry.messageId)).toEqual([carrierMessageId]);
    expect(carrier.health().errors?.responseTimeouts).toBeGreaterThan(0);
  });
});

/** Holds the whole process, as a busy event loop does: no timer fires and no socket is read meanwhile. */
function stallEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What the send worker does with a message the carrier could not take: the same message again once it is bound. */
async function sendAsTheWorkerDoes(carrier: SmppCarrier, sms: OutboundSms, attempts = 3) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await carrier.send(sms);
    } catch (error) {
      if (!(error instanceof CarrierUnavailableError) || attempt >= attempts) throw error;
      await waitFor(async () => (carrier.health().state === 'bound' ? true : null));
    }
  }
}

describe('delivery receipts', () => {
  it('reads receipts in TLVs and in the standard text, ignoring intermediate states', async () => {
    const { smsc, carrier, reports } = await connect();
    const first = message();
    const second = message();
    await carrier.send(first);
    await carrier.send(second);
    expect(await smsc.deliverReceipt(smsc.messageId(1), 'tlv', 'ENROUTE')).toBe(0);
    expect(await smsc.deliverReceipt(smsc.messageId(1), 'tlv')).toBe(0);
    expect(await smsc.deliverReceipt(smsc.messageId(2), 'text', 'UNDELIV')).toBe(0);
    await waitFor(async () => (reports.length === 2 ? true : null));
    expect(reports.find((report) => report.reference === first.reference)).toMatchObject({
      carrierMessageId: smsc.messageId(1),
      status: 'delivered',
    });
    expect(reports.find((report) => report.reference === second.reference)).toMatchObject({
      carrierMessageId: smsc.messageId(2),
      status: 'failed',
      error: { code: 'undeliverable', message: expect.stringContaining('UNDELIV') },
    });
  });

  it('keeps a receipt that arrives before the submit_sm_resp and applies it once the id is known', async () => {
    const { smsc, carrier, reports } = await connect();
    smsc.behaviour = async (n, _submit, _session) => {
      // The receipt for the id this submit is about to get, before its response.
      expect(await smsc.deliverReceipt(smsc.messageId(n), 'text')).toBe(0);
      return 'ok' as const;
    };
    const sms = message();
    await carrier.send(sms);
    await waitFor(async () => (reports.length === 1 ? true : null));
    expect(reports[0]).toMatchObject({
      reference: sms.reference,
      status: 'delivered',
      carrierMessageId: smsc.messageId(1),
    });
  });

  it('settles a multi-part message once every part is delivered, or as soon as one part fails', async () => {
    const { smsc, carrier, reports } = await connect();
    const whole = message({ text: 'z'.repeat(320), segments: 3 });
    const broken = message({ text: 'w'.repeat(200), segments: 2 });
    await carrier.send(whole);
    await carrier.send(broken);
    await smsc.deliverReceipt(smsc.messageId(1), 'text');
    await smsc.deliverReceipt(smsc.messageId(2), 'tlv');
    await smsc.deliverReceipt(smsc.messageId(5), 'text', 'UNDELIV');
    await waitFor(async () => (reports.length === 1 ? true : null));
    expect(reports[0]).toMatchObject({ reference: broken.reference, status: 'failed' });
    await smsc.deliverReceipt(smsc.messageId(3), 'tlv');
    await waitFor(async () => (reports.length === 2 ? true : null));
    expect(reports[1]).toMatchObject({
      reference: whole.reference,
      status: 'delivered',
      carrierMessageId: smsc.messageId(1),
    });
  });
});

describe('receipts, durably', () => {
  it('stores a receipt before acknowledging it and applies it once the messages domain takes it', async () => {
    const { smsc, carrier, reports, sink } = await connect();
    const sms = message();
    await carrier.send(sms);
    sink.failReports = true;
    expect(await smsc.deliverReceipt(smsc.messageId(1), 'tlv')).toBe(0);
    // Tern's SMPP carrier is named `smpp` when no name is given.
    const stored = await prisma.smppReceipt.findUniqueOrThrow({
      where: { carrier_smscMessageId: { carrier: 'smpp', smscMessageId: smsc.messageId(1) } },
    });
    expect(stored).toMatchObject({ delivered: true, appliedAt: null });
    // The loop has tried to apply it and been refused: the receipt stays stored, not applied.
    await waitFor(async () => (sink.refusedReports > 0 ? true : null));
    expect(reports).toHaveLength(0);
    expect(
      await prisma.smppReceipt.findUniqueOrThrow({
        where: { carrier_smscMessageId: { carrier: 'smpp', smscMessageId: smsc.messageId(1) } },
      }),
    ).toMatchObject({ appliedAt: null });
    sink.failReports = false;
    await waitFor(async () => (reports.length === 1 ? true : null));
    expect(reports[0]).toMatchObject({ reference: sms.reference, status: 'delivered' });
    await waitFor(async () =>
      (
        await prisma.smppReceipt.findUniqueOrThrow({
          where: { carrier_smscMessageId: { carrier: 'smpp', smscMessageId: smsc.messageId(1) } },
        })
      ).appliedAt
        ? true
        : null,
    );
  });
});

describe('mobile-originated messages', () => {
  it('puts a concatenated reply together, whatever the order of its parts, and hands it over once', async () => {
    const { smsc, inbound } = await connect();
    const udh = (part: number) => Buffer.from([0x05, 0x00, 0x03, 0x2a, 3, part]);
    expect(await smsc.deliverMessage('447700900125', 'middle ', { udh: udh(2) })).toBe(0);
    expect(await smsc.deliverMessage('447700900125', 'Start ', { udh: udh(1) })).toBe(0);
    expect(await smsc.deliverMessage('447700900125', 'Start ', { udh: udh(1) })).toBe(0);
    expect(inbound).toHaveLength(0);
    expect(await smsc.deliverMessage('447700900125', 'end', { udh: udh(3) })).toBe(0);
    expect(inbound).toMatchObject([{ from: '447700900125', text: 'Start middle end' }]);
    expect(await prisma.smppInboundPart.count({ where: { sourceAddr: '447700900125' } })).toBe(0);
  });

  it('hands replies in GSM-7 and UCS-2 to the messages domain', async () => {
    const { smsc, inbound } = await connect();
    expect(await smsc.deliverMessage('447700900123', 'Yes please', { to: 'Tern' })).toBe(0);
    expect(await smsc.deliverMessage('+447700900124', 'Привет', { dataCoding: 8 })).toBe(0);
    expect(inbound).toMatchObject([
      { from: '447700900123', to: 'Tern', text: 'Yes please' },
      { from: '447700900124', text: 'Привет' },
    ]);
  });

  it('asks the SMSC to deliver again a reply it could not store', async () => {
    const { smsc, sink } = await connect();
    sink.failInbound = true;
    expect(await smsc.deliverMessage('447700900123', 'STOP')).toBe(smpp.errors.ESME_RX_T_APPN);
  });
});

describe('configuration', () => {
  it('reads SMPP_URL and the SMPP settings', () => {
    const config = loadConfig({
      CARRIER: 'smpp',
      SMPP_URL: 'smpps://tern%40x:p%3Ass@smsc.example.net',
      SMPP_WINDOW: '4',
      SMPP_CONCAT: 'payload',
    });
    expect(config.smpp).toMatchObject({
      host: 'smsc.example.net',
      port: 3550,
      tls: true,
      systemId: 'tern@x',
      password: 'p:ss',
      window: 4,
      concatenation: 'payload',
    });
    expect(loadConfig({ CARRIER: 'smpp', SMPP_URL: 'smpp://tern:pw@10.0.0.1' }).smpp).toMatchObject({
      port: 2775,
      tls: false,
      window: 10,
      concatenation: 'udh',
    });
    expect(loadConfig({}).smpp).toBeNull();
  });

  it('stops start-up with one clear line when SMPP_URL is missing or wrong, without echoing the password', () => {
    expect(() => loadConfig({ CARRIER: 'smpp' })).toThrow(/SMPP_URL is required when CARRIER=smpp/);
    for (const url of [
      'http://tern:hunter2@host:2775',
      'smpp://:hunter2@host:2775',
      'smpp://tern:hunter2toolong@host:2775',
      'not a url hunter2',
    ]) {
      const error = (() => {
        try {
          loadConfig({ CARRIER: 'smpp', SMPP_URL: url });
        } catch (caught) {
          return caught as Error;
        }
        return null;
      })();
      expect(error, url).toBeInstanceOf(ConfigError);
      expect(error!.message).toMatch(/^invalid configuration: SMPP_URL /);
      expect(error!.message).not.toContain('hunter2');
    }
    expect(() =>
      loadConfig({
        CARRIER: 'smpp',
        SMPP_URL: 'smpp://tern:pw@host',
        SMPP_SOURCE_ADDR: 'far too long a sender',
      }),
    ).toThrow(/SMPP_SOURCE_ADDR/);
  });
});
