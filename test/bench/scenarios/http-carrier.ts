import { randomBytes } from 'node:crypto';
import { FakeTwilio, statusCallback, type TwilioMessage } from '../../support/fake-providers/fake-twilio.js';
import type { Bench } from '../bench.js';
import type { RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

export const MESSAGES = 10_000;
const DEADLINE_MS = 120_000;
const CARRIER = 'twilio';

/**
 * The provider reports each message delivered as soon as it answered for it: a status callback
 * signed as Twilio signs them (the twilio package's own signature), to the StatusCallback URL
 * Tern gave with the message. Its work is the bench process's, not the service's.
 */
function reportAtOnce(twilio: FakeTwilio): { refused: () => number } {
  let refused = 0;
  const deliver = async (message: TwilioMessage) => {
    const callback = statusCallback(message, 'delivered');
    const response = await fetch(callback.url, {
      method: 'POST',
      headers: { 'x-twilio-signature': callback.signature },
      body: new URLSearchParams(callback.params),
    });
    await response.body?.cancel();
    if (!response.ok) refused += 1;
  };
  twilio.onAnswered = (message) => void deliver(message).catch(() => (refused += 1));
  return { refused: () => refused };
}

/** The route `*` → the Twilio carrier, added with the CLI as an operator adds it (its token sealed). */
async function configure(bench: Bench, twilio: FakeTwilio): Promise<void> {
  await bench.database.query('DELETE FROM routes');
  await bench.database.query('DELETE FROM carriers');
  await bench.cli(['carriers', 'add', CARRIER, '--url', twilio.url()]);
  await bench.database.query(
    `INSERT INTO routes (id, prefix, scope, carriers, updated_at) VALUES ($1, '*', '', $2, now())`,
    [`rte_bench${randomBytes(6).toString('hex')}`, [CARRIER]],
  );
}

/** Removed afterwards, so that the next gateway makes carrier `default` (the simulator) again. */
async function unconfigure(bench: Bench): Promise<void> {
  await bench.database.query('DELETE FROM routes');
  await bench.database.query('DELETE FROM carriers');
  await bench.database.query('DELETE FROM carrier_callback_events');
}

export const httpCarrier: RunnableScenario = {
  name: 'http-carrier',
  describe:
    `${MESSAGES.toLocaleString('en')} messages over REST through an HTTP carrier, a loopback Twilio in the bench process that answers each ` +
    'request at once and then calls back `delivered`, signed, to the API (accept → provider request → verified callback → delivered); ' +
    'compare CPU per message with end-to-end (the simulator) in the same run',
  async run(bench, layout) {
    const twilio = await FakeTwilio.start();
    const reports = reportAtOnce(twilio);
    await configure(bench, twilio);
    try {
      const service = await bench.startGateway(layout, { workers: true, publicUrl: true });
      const result = await bench.withService(service, async () =>
        bench.flow(service, restSend(await bench.bearer(service)), MESSAGES, DEADLINE_MS),
      );
      if (reports.refused() > 0)
        return { ...result, incomplete: `${reports.refused()} signed callbacks were refused` };
      return result;
    } finally {
      twilio.onAnswered = null;
      await unconfigure(bench);
      await twilio.close();
    }
  },
};
