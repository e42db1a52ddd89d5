import type { RunnableScenario } from './scenario.js';
import { graphqlSend } from './send-graphql.js';
import { restSend } from './send-rest.js';

// The two halves of one measure: what a request costs through Fastify alone, and through a bare
// Yoga on the same Fastify, with no work behind either (test/bench/graphql-floor-server.ts). Their
// difference is Yoga's own cost per request, which no plugin or resolver of Tern's can remove.

export const floorRest: RunnableScenario = {
  name: 'floor-rest',
  describe:
    'a send answered with no work at all by a bare Fastify route, the same bytes as send-rest (`test/bench/graphql-floor-server.ts`)',
  async run(bench, layout) {
    const service = await bench.startGraphqlFloor(layout);
    return bench.withService(service, () => bench.load(service, restSend(bench.bearerSoFar())));
  },
};

export const floorGraphql: RunnableScenario = {
  name: 'floor-graphql',
  describe:
    'the same answered through a bare Yoga (one mutation, every Yoga default) on the same Fastify, the same bytes as send-graphql',
  async run(bench, layout) {
    const service = await bench.startGraphqlFloor(layout);
    return bench.withService(service, () => bench.load(service, graphqlSend(bench.bearerSoFar())));
  },
};
