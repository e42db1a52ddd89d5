import type { RequestSpec } from '../bench.js';
import type { RunnableScenario } from './scenario.js';
import { TEXT } from './send-rest.js';

// The selection of the /v1 layer's own SendMessage operation, so both layers do the same work.
const SEND_MESSAGE = `mutation SendMessage($input: SendMessageInput!) {
  sendMessage(input: $input) {
    __typename
    ... on Error { code message ... on ValidationError { details { field issue } } }
    ... on MessageAcceptance { id status to campaignId }
  }
}`;

export function graphqlSend(authorization: string): RequestSpec {
  return {
    path: '/graphql',
    headers: { 'content-type': 'application/json', authorization },
    body: (to) => JSON.stringify({ query: SEND_MESSAGE, variables: { input: { to, message: TEXT } } }),
    accepted: (status, body) => status === 200 && body.includes('"status":"queued"'),
  };
}

export const sendGraphql: RunnableScenario = {
  name: 'send-graphql',
  describe: 'the same through the `sendMessage` mutation at `/graphql`',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: false });
    return bench.withService(service, async () =>
      bench.load(service, graphqlSend(await bench.bearer(service))),
    );
  },
};
