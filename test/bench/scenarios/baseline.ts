import type { RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

export const baseline: RunnableScenario = {
  name: 'baseline',
  describe: 'a bare `node:http` server doing the same durable work: one `INSERT` through `pg`, one BullMQ `add` (`test/bench/baseline-server.ts`)',
  async run(bench, layout) {
    const service = await bench.startBaseline(layout);
    // The baseline reads no token; it gets one all the same, so that its requests are the gateway's bytes.
    return bench.withService(service, () => bench.load(service, restSend(bench.bearerSoFar())));
  },
};
