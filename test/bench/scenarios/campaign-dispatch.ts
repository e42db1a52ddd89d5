import type { PendingScenario } from './scenario.js';

export const campaignDispatch: PendingScenario = {
  name: 'campaign-dispatch',
  describe: 'a running campaign of 10,000 contacts, from start to every message `delivered`',
  pending: 'not yet implemented (the campaigns issue)',
};
