import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { execute, parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';

// What GraphQL over HTTP costs before any of Tern's work: a Fastify server that answers a send
// whose resolver does nothing, once as the /v1 layer runs it (the operation parsed once and
// executed by graphql-js, the answer shaped from its result) and once through a bare Yoga (every
// Yoga default, mounted as Tern mounts its own). The two scenarios that drive it measure the CPU
// a request costs in each, so the report can set the difference, Yoga's own cost, against what
// send-graphql costs over send-rest. Started by the harness with PORT and HOST.

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query { ok: Boolean }
    interface Error { code: String! message: String! }
    type FieldIssue { field: String! issue: String! }
    type ValidationError implements Error { code: String! message: String! details: [FieldIssue!]! }
    type MessageAcceptance { id: ID! status: String! to: String! campaignId: ID }
    union SendMessageResult = MessageAcceptance | ValidationError
    input SendMessageInput { to: String! message: String! }
    type Mutation { sendMessage(input: SendMessageInput!): SendMessageResult! }
  `,
  resolvers: {
    Mutation: {
      sendMessage: (_parent: unknown, { input }: { input: { to: string } }) => ({
        __typename: 'MessageAcceptance',
        id: `msg_${randomUUID()}`,
        status: 'queued',
        to: input.to,
        campaignId: null,
      }),
    },
  },
});

const SEND_MESSAGE = parse(`mutation SendMessage($input: SendMessageInput!) {
  sendMessage(input: $input) {
    __typename
    ... on Error { code message ... on ValidationError { details { field issue } } }
    ... on MessageAcceptance { id status to campaignId }
  }
}`);

const yoga = createYoga({ schema, logging: false, landingPage: false, graphiql: false });
const app = Fastify();

app.get('/health', async () => ({ status: 'ok' }));
app.post('/v1/messages/send', async (request, reply) => {
  const result = await execute({ schema, document: SEND_MESSAGE, variableValues: { input: request.body } });
  const sent = (result.data as { sendMessage: { id: string; status: string; to: string } }).sendMessage;
  return reply
    .status(202)
    .send({ message: sent.id, status: sent.status, to: sent.to, request: `req_${randomUUID()}` });
});
app.route({
  url: '/graphql',
  method: ['GET', 'POST'],
  handler: async (request, reply) => {
    const response = await yoga.handleNodeRequestAndResponse(request, reply);
    response.headers.forEach((value, key) => {
      reply.header(key, value);
    });
    reply.status(response.status);
    return reply.send(await response.text());
  },
});

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' });

process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
