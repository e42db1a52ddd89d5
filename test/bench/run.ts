import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from '../support/tern-processes.js';
import { Bench, LAYOUTS } from './bench.js';
import { machineFacts } from './machine.js';
import { type Outcome, renderReport } from './report.js';
import { SCENARIOS } from './scenarios/index.js';

// `npm run bench [-- --only send-rest,baseline] [--layout one|all] [--profile]`: the report goes
// to stdout and to test/bench/results/latest.md (partial.md for a partial run); progress to stderr.

const USAGE = 'usage: npm run bench -- [--only SCENARIO,…] [--layout one|all] [--profile]';
// Scenarios start only within this budget; the report names those that did not.
const BUDGET_MS = 14 * 60_000;
// A scenario still running at this point of the run is cut: the report is written with what the
// others measured, and names the one cut.
const RUN_DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MINUTES ?? 18) * 60_000;
// Stopping the services and dropping the database after a cut must not hold the report back.
const CLOSE_WAIT_MS = 60_000;
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

let values: { only?: string; layout?: string; profile?: boolean };
try {
  ({ values } = parseArgs({
    options: { only: { type: 'string' }, layout: { type: 'string' }, profile: { type: 'boolean' } },
  }));
} catch (error) {
  fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
}
const runnable = SCENARIOS.filter((scenario) => 'run' in scenario);
const selected = new Set(
  values.only ? values.only.split(',').map((name) => name.trim()) : runnable.map((scenario) => scenario.name),
);
for (const name of selected) {
  if (!runnable.some((scenario) => scenario.name === name))
    fail(`no runnable scenario "${name}"; there are ${runnable.map((s) => s.name).join(', ')}`);
}
const layouts = values.layout ? LAYOUTS.filter((layout) => layout.key === values.layout) : LAYOUTS;
if (layouts.length === 0) fail(`unknown layout "${values.layout}"\n${USAGE}`);
const partial = selected.size < runnable.length || layouts.length < LAYOUTS.length;

const startedAt = new Date();
const elapsed = () => {
  const seconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};
const progress = (line: string) => process.stderr.write(`[${elapsed()}] ${line}\n`);

const profileDir = values.profile ? join(RESULTS, 'profiles') : null;
if (profileDir) rmSync(profileDir, { recursive: true, force: true });
// What each service printed (at LOG_LEVEL warn: its warnings and errors), kept for a figure that
// looks wrong; a run that succeeds has no other trace of them.
const logDir = join(RESULTS, 'logs');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });

const bench = await Bench.create({
  serverUrl: process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  profileDir,
  logDir,
});
progress(`database ${bench.databaseName} ready`);

let closing: Promise<void> | null = null;
const close = () => (closing ??= bench.close());
const abandon = (reason: string) => {
  progress(`${reason}; stopping the processes, dropping the database`);
  // Whatever close() gets stuck on, the bench still ends.
  setTimeout(() => process.exit(1), 20_000).unref();
  void close().finally(() => process.exit(1));
};
process.once('SIGINT', () => abandon('interrupted'));
process.once('SIGTERM', () => abandon('terminated'));

/** The scenario's result, or null when the run's deadline came first (the scenario is left to fail on its own). */
async function withinDeadline<T>(running: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), RUN_DEADLINE_MS - (Date.now() - startedAt.getTime()));
  });
  // A cut scenario's requests fail once its services stop; nobody waits for them any more.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, cut]);
  } finally {
    clearTimeout(timer);
  }
}

const outcomes: Outcome[] = [];
let cutShort = false;
// A cut scenario's own loops may still reject once its connections close: noise, not a result.
process.on('unhandledRejection', (error) => {
  if (!cutShort) throw error;
  progress(`  after the cut: ${error instanceof Error ? error.message : String(error)}`);
});
let report: string;
try {
  const machine = await machineFacts(bench.database, bench.redis, ROOT);
  for (const layout of layouts) {
    for (const scenario of runnable) {
      if (!selected.has(scenario.name)) continue;
      if (cutShort || Date.now() - startedAt.getTime() > BUDGET_MS) {
        outcomes.push({
          scenario: scenario.name,
          layout,
          result: null,
          error: null,
          skipped: cutShort
            ? 'not started: a scenario before it was cut at the run deadline'
            : `not started: the run had used its ${BUDGET_MS / 60_000} minutes`,
        });
        progress(`${layout.label} · ${scenario.name}: skipped, out of time`);
        continue;
      }
      progress(`${layout.label} · ${scenario.name} …`);
      await bench.resetMessages();
      bench.logLabel = `${scenario.name}-${layout.key}`;
      try {
        const result = await withinDeadline(scenario.run(bench, layout));
        if (result === null) {
          cutShort = true;
          const error = `cut: still running ${RUN_DEADLINE_MS / 60_000} minutes into the run`;
          outcomes.push({ scenario: scenario.name, layout, result: null, error, skipped: null });
          progress(`  ${error}`);
          continue;
        }
        outcomes.push({ scenario: scenario.name, layout, result, error: null, skipped: null });
        progress(
          result.kind === 'load'
            ? `  ${Math.round(result.acceptedPerSecond)} accepted/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.errors} errors`
            : result.kind === 'reads'
              ? `  ${result.reads.map((read) => `${read.name}: p50 ${read.p50Ms.toFixed(1)} ms`).join('; ')}`
              : `  ${result.completed} delivered in ${result.wallSeconds.toFixed(1)} s: ${Math.round(result.perSecond)} messages/s, p99 ${Math.round(result.p99Ms)} ms${result.incomplete ? ` (${result.incomplete})` : ''}`,
        );
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        outcomes.push({ scenario: scenario.name, layout, result: null, error: message, skipped: null });
        progress(`  failed: ${message.split('\n')[0]}`);
      }
    }
  }
  report = renderReport({
    startedAt,
    seconds: (Date.now() - startedAt.getTime()) / 1000,
    machine,
    loadAverageAtEnd: os.loadavg()[0] ?? 0,
    databaseName: bench.databaseName,
    layouts,
    scenarios: SCENARIOS,
    selected,
    outcomes,
    profiled: profileDir !== null,
  });
} finally {
  // After a cut, the cut scenario's services may not stop cleanly: the report does not wait for them.
  await Promise.race([close(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
}

mkdirSync(RESULTS, { recursive: true });
const file = join(RESULTS, partial ? 'partial.md' : 'latest.md');
writeFileSync(file, report);
process.stdout.write(report);
progress(`report written to ${file}`);
process.exit(outcomes.some((outcome) => outcome.error) ? 1 : 0);
