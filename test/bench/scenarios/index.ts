import { baseline, baselineBatched } from './baseline.js';
import { campaignDispatch } from './campaign-dispatch.js';
import { contactImportCsv, contactImportXlsx } from './contact-import.js';
import { deepPages } from './deep-pages.js';
import { endToEnd } from './end-to-end.js';
import { fraudGuard } from './fraud-guard.js';
import { floorGraphql, floorRest } from './graphql-floor.js';
import { httpCarrier } from './http-carrier.js';
import { messageStats } from './message-stats.js';
import type { Scenario } from './scenario.js';
import { scheduledRelease } from './scheduled-release.js';
import { sendGraphql } from './send-graphql.js';
import { sendLatencyGuard } from './send-latency.js';
import { sendRest, sendRestGuard, sendRestQuota } from './send-rest.js';
import { senderChoice } from './sender-choice.js';
import { statsFairness } from './stats-fairness.js';
import { twoCarriers } from './two-carriers.js';
import { verificationChecks, verifications } from './verifications.js';
import { webhooks } from './webhooks.js';

/** Every scenario, in the order they run; a new one is one module and one entry here. */
export const SCENARIOS: readonly Scenario[] = [
  sendRest,
  sendRestQuota,
  sendRestGuard,
  sendLatencyGuard,
  sendGraphql,
  verifications,
  verificationChecks,
  baseline,
  baselineBatched,
  floorRest,
  floorGraphql,
  endToEnd,
  campaignDispatch,
  scheduledRelease,
  contactImportCsv,
  contactImportXlsx,
  webhooks,
  twoCarriers,
  httpCarrier,
  senderChoice,
  deepPages,
  messageStats,
  statsFairness,
  fraudGuard,
];
