import type { RequestSpec } from '../bench.js';
import type { RunnableScenario } from './scenario.js';

// One-time codes against a send: a start is a send plus its share of a batch's transaction (locks,
// read, write), a check an HMAC and its share of a batch's statement. send-rest and send-graphql
// are what they are measured against.

export function restStart(authorization: string): RequestSpec {
  return {
    path: '/v1/verifications',
    headers: { 'content-type': 'application/json', authorization },
    body: (to) => JSON.stringify({ to }),
    accepted: (status, body) => status === 201 && body.includes('"status":"pending"'),
  };
}

export const verifications: RunnableScenario = {
  name: 'verifications',
  describe: '`POST /v1/verifications`, a new number per request (against send-rest)',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: false });
    return bench.withService(service, async () =>
      bench.load(service, restStart(await bench.bearer(service))),
    );
  },
};

const CHECK = `mutation CheckVerification($id: ID!, $code: String!) {
  checkVerification(id: $id, input: { code: $code }) {
    __typename
    ... on Error { code message }
    ... on VerificationCheck { id status }
  }
}`;

/** Verifications made before the load: each takes 5 checks, so 20 s at thousands a second fit. */
const POOL = 8_000;
const POOL_CONCURRENCY = 32;

async function startPool(url: string, authorization: string): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < POOL) {
      const n = next++;
      const response = await fetch(`${url}/v1/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ to: `55118${String(n).padStart(8, '0')}` }),
      });
      const body = (await response.json()) as { verification?: string };
      if (response.status !== 201 || !body.verification)
        throw new Error(`a start for the check pool answered ${response.status}: ${JSON.stringify(body)}`);
      ids.push(body.verification);
    }
  };
  await Promise.all(Array.from({ length: POOL_CONCURRENCY }, worker));
  return ids;
}

/** A wrong code each time, round the pool: every check locks its row and counts an attempt. */
function graphqlCheck(authorization: string, ids: string[]): RequestSpec {
  let counter = 0;
  return {
    path: '/graphql',
    headers: { 'content-type': 'application/json', authorization },
    body: () => {
      const id = ids[counter++ % ids.length];
      return JSON.stringify({ query: CHECK, variables: { id, code: '000000' } });
    },
    accepted: (status, body) => status === 200 && body.includes('"status":"denied"'),
  };
}

export const verificationChecks: RunnableScenario = {
  name: 'verification-checks',
  describe:
    'the `checkVerification` mutation at `/graphql`, a wrong code round a pool of 8,000 (against send-graphql)',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: false });
    return bench.withService(service, async () => {
      const authorization = await bench.bearer(service);
      const ids = await startPool(service.url, authorization);
      return bench.load(service, graphqlCheck(authorization, ids));
    });
  },
};
