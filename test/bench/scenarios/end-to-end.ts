import type { RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

export const MESSAGES = 10_000;
// Beyond this the scenario reports how far it got instead of waiting: the run must end by itself.
const DEADLINE_MS = 90_000;

export const endToEnd: RunnableScenario = {
  name: 'end-to-end',
  describe: `${MESSAGES.toLocaleString('en')} messages sent over REST at 64 connections while the workers deliver them (simulator, delay 0); timed from the first send to the last \`delivered\``,
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: true });
    return bench.withService(service, async () =>
      bench.flow(service, restSend(await bench.bearer(service)), MESSAGES, DEADLINE_MS),
    );
  },
};
