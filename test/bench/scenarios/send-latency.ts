import type { Bench, Service } from '../bench.js';
import type { ReadResult, RunnableScenario } from './scenario.js';
import { TEXT } from './send-rest.js';

// What the fraud guard adds to one send's latency when the gateway is not saturated: the
// saturating scenarios' p99 is mostly queueing, and says nothing about 1 ms. Two gateways run
// side by side, one with the guard off and one with it on (send-rest-guard's rules), and the
// sends alternate between them at a fixed rate, so that whatever else the machine does falls on
// both alike.

/** Sends a second, both gateways together: far below what one gateway accepts (~1,500/s on a quiet machine). */
const RATE = Number(process.env.BENCH_SEND_RATE ?? 200);
const WARMUP_SECONDS = 3;
/** How long each rate is held; a p99 of a lower rate needs longer to rest on as many sends. */
const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 30);

interface Timed {
  latencies: number[];
  failures: number;
  firstError: string | null;
}

const timedSet = (): Timed => ({ latencies: [], failures: 0, firstError: null });

async function sendOne(service: Service, authorization: string, to: string, into: Timed): Promise<void> {
  const started = performance.now();
  try {
    const response = await fetch(`${service.url}/v1/messages/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ to, message: TEXT }),
    });
    const body = await response.text();
    if (response.status !== 202) throw new Error(`HTTP ${response.status}: ${body.slice(0, 300)}`);
    into.latencies.push(performance.now() - started);
  } catch (error) {
    into.failures += 1;
    into.firstError ??= `${String(error)}${error instanceof Error && error.cause ? ` (${String(error.cause)})` : ''}`;
  }
}

/**
 * Open loop: the i-th send leaves at start + i / RATE whether or not the earlier ones have been
 * answered, alternately to each service; its latency runs from when it left to its answer.
 */
async function paced(bench: Bench, services: Service[], authorization: string, seconds: number) {
  const timed = services.map(timedSet);
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < seconds * RATE; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const lane = i % services.length;
    pending.push(sendOne(services[lane]!, authorization, bench.takeNumber(), timed[lane]!));
  }
  await Promise.all(pending);
  return timed;
}

function summary(name: string, { latencies }: Timed) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { name, requests: sorted.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99) };
}

export const sendLatencyGuard: RunnableScenario = {
  name: 'send-latency-guard',
  describe: `\`POST /v1/messages/send\` at a fixed ${RATE} requests/s in all, alternately to two gateways side by side, one with the fraud guard off and one with it on (send-rest-guard's rules): what the guard adds to a send's latency when nothing queues`,
  async run(bench, layout): Promise<ReadResult> {
    const off = await bench.startGateway(layout, { workers: false });
    const on = await bench.startGateway(layout, {
      workers: false,
      env: { FRAUD_FLOOD_IDENTICAL: '6', FRAUD_FLOOD_MAX: '20', FRAUD_VELOCITY_MAX: '100000' },
    });
    try {
      const authorization = await bench.bearer(off);
      await paced(bench, [off, on], authorization, WARMUP_SECONDS);
      // Each gateway's CPU over the same window: the same sends, interleaved, so the machine's
      // other work weighs on both alike and their difference is the guard's.
      const watches = [await bench.watch(off), await bench.watch(on)];
      const [withoutGuard, withGuard] = await paced(bench, [off, on], authorization, SECONDS);
      const perSide = (SECONDS * RATE) / 2;
      const [cpuOff, cpuOn] = await Promise.all(watches.map((watch) => watch.stop(perSide)));
      const failed = [withoutGuard!, withGuard!].find((timed) => timed.failures > 0);
      // A send that failed (a machine too busy to answer in time) is left out of the latencies, and said.
      const failures = failed
        ? ` Failed sends, left out: ${withoutGuard!.failures} off, ${withGuard!.failures} on; the first: ${failed.firstError}.`
        : '';
      const reads = [summary('send, guard off', withoutGuard!), summary('send, guard on', withGuard!)];
      const [a, b] = reads as [ReturnType<typeof summary>, ReturnType<typeof summary>];
      const ms = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(2)} ms`;
      const cpu = (value: number) => `${value.toFixed(3)} ms`;
      return {
        kind: 'reads',
        data: 'one account, a new number per send',
        reads,
        pace: `${RATE} requests/s in all (${RATE / 2}/s to each), ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up, open loop`,
        note:
          `The guard adds ${ms(b.p50Ms - a.p50Ms)} at p50, ${ms(b.p95Ms - a.p95Ms)} at p95 and ${ms(b.p99Ms - a.p99Ms)} at p99. ` +
          `Service CPU per send: ${cpu(cpuOff!.costs.serviceCpuMsPer)} off, ${cpu(cpuOn!.costs.serviceCpuMsPer)} on ` +
          `(the guard: ${cpu(cpuOn!.costs.serviceCpuMsPer - cpuOff!.costs.serviceCpuMsPer)}); the machine ${Math.round(cpuOn!.costs.machineBusyPercent)} % busy.${failures}`,
        firstError: null,
        profile: null,
      };
    } finally {
      await Promise.all([bench.stopService(off), bench.stopService(on)]);
    }
  },
};
