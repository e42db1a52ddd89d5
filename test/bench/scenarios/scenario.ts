import type { Bench, Layout } from '../bench.js';
import type { ProfileSummary } from '../profile.js';

/** Where the CPU went during the measured window, and what PostgreSQL was asked per message. */
export interface Costs {
  /** CPU of the processes under test (every Tern or baseline process), per request or message. */
  serviceCpuMsPer: number;
  /** The load generator's share of the machine, in % of one core. */
  loadGeneratorCorePercent: number;
  /** Of all cores, over the window: the service, PostgreSQL, Redis, the load generator and anything else. */
  machineBusyPercent: number;
  /** Committed and rolled-back transactions of the bench database, per message stored. */
  pgTransactionsPerMessage: number | null;
}

/** A request load held for a fixed time: the acceptance scenarios. */
export interface LoadResult {
  kind: 'load';
  accepted: number;
  errors: number;
  firstError: string | null;
  acceptedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  costs: Costs;
  profile: ProfileSummary | null;
}

/** A fixed number of items through a pipeline to their end state: end-to-end and its kin. */
export interface FlowResult {
  kind: 'flow';
  items: number;
  /** How the items entered: e.g. accepted/s while the workers were already delivering. */
  intakePerSecond: number;
  accepted: number;
  /** Sends through the API that were not accepted (answers other than an acceptance, connection errors); absent for a flow that does not send through the API. */
  errors?: number;
  firstError?: string | null;
  /** Delivered, for messages. */
  completed: number;
  failed: number;
  wallSeconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Set when the items did not all complete within the scenario's time bound. */
  incomplete: string | null;
  costs: Costs;
  profile: ProfileSummary | null;
  /** Resident memory of the largest process under test, before the measured work and at its peak. */
  memory?: { idleRssMiB: number; peakRssMiB: number };
  /** Two carriers, one killed halfway: how soon the other took over, and what a route choice costs. */
  failover?: { killToOtherMs: number | null; routeChoiceUs: number };
  /** CPU of one sender choice from a pool of 100 in memory, in microseconds (sender-choice). */
  senderChoiceUs?: number;
}

/** Timed reads, one request at a time, each kind against the same data: how a read scales with depth. */
export interface ReadResult {
  kind: 'reads';
  /** What the reads run against, for the report (e.g. "1,000,000 messages"). */
  data: string;
  reads: { name: string; requests: number; p50Ms: number; p95Ms?: number; p99Ms: number }[];
  /** How the requests were made, when not one at a time (e.g. "at a fixed 200 requests/s"). */
  pace?: string;
  /** A line under the table: what the reads say together. */
  note?: string;
  /** A read that answers anything but a full page fails the scenario instead. */
  firstError: null;
  /** No CPU profile is taken of reads one at a time. */
  profile: null;
}

export type ScenarioResult = LoadResult | FlowResult | ReadResult;

interface ScenarioBase {
  /** As the report and `--only` name it. */
  name: string;
  describe: string;
}

export interface RunnableScenario extends ScenarioBase {
  run(bench: Bench, layout: Layout): Promise<ScenarioResult>;
}

/** A scenario of a later issue: the report names it until it gets a `run`. */
export interface PendingScenario extends ScenarioBase {
  pending: string;
}

export type Scenario = RunnableScenario | PendingScenario;
