import type { RequestSpec } from '../bench.js';
import type { RunnableScenario } from './scenario.js';

/** One GSM-7 segment, like most traffic. */
export const TEXT = 'Your order 4411 has shipped and arrives tomorrow';

export function restSend(authorization: string): RequestSpec {
  return {
    path: '/v1/messages/send',
    headers: { 'content-type': 'application/json', authorization },
    body: (to) => JSON.stringify({ to, message: TEXT }),
    accepted: (status, body) => status === 202 && body.includes('"status":"queued"'),
  };
}

export const sendRest: RunnableScenario = {
  name: 'send-rest',
  describe: '`POST /v1/messages/send`, a new number per request',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: false });
    return bench.withService(service, async () => bench.load(service, restSend(await bench.bearer(service))));
  },
};

/** The same sends from an account with segment quotas and allowed countries: what checking them costs. */
export const sendRestQuota: RunnableScenario = {
  name: 'send-rest-quota',
  describe:
    '`POST /v1/messages/send` as send-rest, the account with daily and monthly quotas and one allowed country',
  async run(bench, layout) {
    await bench.setQuotas(true);
    try {
      return await sendRest.run(bench, layout);
    } finally {
      await bench.setQuotas(false);
    }
  },
};

/**
 * The same sends with the fraud guard on: its default flood limits (each send goes to a new
 * number) and a velocity limit no run reaches, since the bench's numbers are consecutive and a
 * range holds 10,000 of them. What one Redis script per send costs, beside send-rest.
 */
export const sendRestGuard: RunnableScenario = {
  name: 'send-rest-guard',
  describe:
    '`POST /v1/messages/send` as send-rest with the fraud guard on (default flood limits, a velocity limit of 100,000 an hour)',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, {
      workers: false,
      env: { FRAUD_FLOOD_IDENTICAL: '6', FRAUD_FLOOD_MAX: '20', FRAUD_VELOCITY_MAX: '100000' },
    });
    return bench.withService(service, async () => bench.load(service, restSend(await bench.bearer(service))));
  },
};
