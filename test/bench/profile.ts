import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type pg from 'pg';

// What `--profile` adds to a scenario: where the service's CPU went (V8 CPU profiles of every
// service process, cut to the measured window), what Redis was asked (INFO commandstats), what
// PostgreSQL's backends were doing (pg_stat_activity, sampled) and, where the server loads it,
// pg_stat_statements.

/** Leads every statement the harness runs while a window is measured, to keep it out of pg_stat_statements' figures. */
export const HARNESS_SQL = '/* bench */';

export interface Share {
  name: string;
  percent: number;
  /** Milliseconds (CPU) or calls per request or message. */
  per: number;
}

export interface ProfileSummary {
  /** Self CPU time by package or source file, and the costliest functions. */
  cpu: { sampledMs: number; areas: Share[]; functions: Share[] } | null;
  /** Calls per request and microseconds per call, by command; the whole server's counts. */
  redis: { command: string; per: number; usecPerCall: number }[];
  /** Where the bench database's backends were, by share of samples. */
  pgActivity: { averageBackends: number; states: Share[] };
  /** Null when the server does not load pg_stat_statements. */
  pgStatements: { query: string; per: number; meanMs: number; percent: number }[] | null;
  notes: string[];
}

/** The monotonic clock V8's profiler stamps its samples with, in microseconds. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const NOT_CPU = new Set(['(idle)', '(root)']);

function areaOf(frame: ProfileNode['callFrame'], root: string): string {
  if (frame.functionName.startsWith('(') && frame.url === '') return frame.functionName;
  const modules = frame.url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scopeOrName, name] = frame.url.slice(modules + '/node_modules/'.length).split('/');
    return scopeOrName?.startsWith('@') ? `${scopeOrName}/${name}` : (scopeOrName ?? frame.url);
  }
  if (frame.url.startsWith('node:')) return 'node core';
  if (frame.url.startsWith('file://')) return relative(root, fileURLToPath(frame.url));
  // Prisma's query compiler, among others.
  if (frame.url.startsWith('wasm://')) return 'WebAssembly';
  // Node's C++ bindings: socket writes (writev, writeBuffer) are most of it under load.
  return '(native)';
}

function functionOf(frame: ProfileNode['callFrame'], root: string): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name.startsWith('(') ? name : `${name} (native)`;
  const area = areaOf(frame, root);
  return `${name} ${frame.url.startsWith('node:') ? frame.url : area}:${frame.lineNumber + 1}`;
}

/** Self time of every V8 CPU profile in `directory`, within [fromMicros, toMicros]. */
export function summarizeCpuProfiles(
  directory: string,
  window: { fromMicros: number; toMicros: number },
  perItems: number,
  root: string,
): ProfileSummary['cpu'] {
  const files = readdirSync(directory).filter((file) => file.endsWith('.cpuprofile'));
  if (files.length === 0) return null;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let sampledMicros = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(directory, file), 'utf8')) as CpuProfile;
    const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    let at = profile.startTime;
    profile.samples.forEach((nodeId, index) => {
      at += profile.timeDeltas[index] ?? 0;
      // A sample stands for the time until the next one.
      const span = profile.timeDeltas[index + 1] ?? 0;
      const frame = frames.get(nodeId);
      if (!frame || NOT_CPU.has(frame.functionName) || at < window.fromMicros || at > window.toMicros) return;
      sampledMicros += span;
      const area = areaOf(frame, root);
      areas.set(area, (areas.get(area) ?? 0) + span);
      const name = functionOf(frame, root);
      functions.set(name, (functions.get(name) ?? 0) + span);
    });
  }
  const top = (map: Map<string, number>, count: number): Share[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, micros]) => ({
        name,
        percent: (100 * micros) / sampledMicros,
        per: micros / 1000 / perItems,
      }));
  return { sampledMs: sampledMicros / 1000, areas: top(areas, 14), functions: top(functions, 20) };
}

export async function redisCommandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of (await redis.info('commandstats')).matchAll(
    /^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm,
  )) {
    stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

export function redisDelta(
  before: Map<string, { calls: number; usec: number }>,
  after: Map<string, { calls: number; usec: number }>,
  perItems: number,
): ProfileSummary['redis'] {
  return [...after]
    .map(([command, { calls, usec }]) => {
      const was = before.get(command) ?? { calls: 0, usec: 0 };
      return { command, calls: calls - was.calls, usec: usec - was.usec };
    })
    .filter((row) => row.calls > 0 && row.command !== 'info')
    .sort((a, b) => b.calls - a.calls)
    .map((row) => ({ command: row.command, per: row.calls / perItems, usecPerCall: row.usec / row.calls }));
}

/** Samples the states of the bench database's backends until stopped. */
export function sampleBackends(database: pg.Pool, databaseName: string, intervalMs = 50) {
  const counts = new Map<string, number>();
  let samples = 0;
  let backends = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await database.query<{
        state: string | null;
        wait_event_type: string | null;
        wait_event: string | null;
      }>(
        `${HARNESS_SQL} SELECT state, wait_event_type, wait_event FROM pg_stat_activity
         WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [databaseName],
      );
      samples += 1;
      for (const row of rows) {
        backends += 1;
        const state =
          row.state === 'active'
            ? row.wait_event
              ? `active, waiting on ${row.wait_event_type}:${row.wait_event}`
              : 'active, running'
            : row.state === 'idle'
              ? 'idle (waiting for the client)'
              : (row.state ?? 'unknown');
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop(): Promise<ProfileSummary['pgActivity']> {
      running = false;
      await loop;
      return {
        averageBackends: samples > 0 ? backends / samples : 0,
        states: [...counts]
          .sort((a, b) => b[1] - a[1])
          .map(([name, count]) => ({ name, percent: (100 * count) / backends, per: count / samples })),
      };
    },
  };
}

/** True when the server preloads pg_stat_statements, the only way it collects anything. */
export async function statementsAvailable(database: pg.Pool): Promise<boolean> {
  const { rows } = await database.query<{ setting: string }>(
    `SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'`,
  );
  if (!/\bpg_stat_statements\b/.test(rows[0]?.setting ?? '')) return false;
  await database.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return true;
}

export async function resetStatements(database: pg.Pool): Promise<void> {
  await database.query(
    `${HARNESS_SQL} SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`,
  );
}

export async function topStatements(
  database: pg.Pool,
  perItems: number,
): Promise<NonNullable<ProfileSummary['pgStatements']>> {
  const { rows } = await database.query<{ query: string; calls: string; mean: number; share: number }>(
    `${HARNESS_SQL} SELECT query, calls, mean_exec_time AS mean, 100 * total_exec_time / NULLIF(SUM(total_exec_time) OVER (), 0) AS share
     FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE $1
     ORDER BY total_exec_time DESC LIMIT 12`,
    [`${HARNESS_SQL}%`],
  );
  return rows.map((row) => ({
    query: row.query.replace(/\s+/g, ' ').slice(0, 160),
    per: Number(row.calls) / perItems,
    meanMs: row.mean,
    percent: row.share ?? 0,
  }));
}
