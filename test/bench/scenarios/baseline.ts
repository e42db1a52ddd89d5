import type { RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

export const baseline: RunnableScenario = {
  name: 'baseline',
  describe:
    'a bare `node:http` server doing the same durable work: one `INSERT` through `pg`, one BullMQ `add` (`test/bench/baseline-server.ts`)',
  async run(bench, layout) {
    const service = await bench.startBaseline(layout);
    // The baseline reads no token; it gets one all the same, so that its requests are the gateway's bytes.
    return bench.withService(service, () => bench.load(service, restSend(bench.bearerSoFar())));
  },
};

export const baselineBatched: RunnableScenario = {
  name: 'baseline-batched',
  describe:
    'the same server batching as Tern does: the sends arriving while a batch is written share one multi-row `INSERT` and one BullMQ `addBulk` (jobs of up to 100 messages)',
  async run(bench, layout) {
    const service = await bench.startBaseline(layout, { batching: true });
    return bench.withService(service, () => bench.load(service, restSend(bench.bearerSoFar())));
  },
};
