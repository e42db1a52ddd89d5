import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type pg from 'pg';

export interface MachineFacts {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  redis: string;
  autocannon: string;
  commit: string;
  loadAverage: number;
}

export async function machineFacts(database: pg.Pool, redis: Redis, root: string): Promise<MachineFacts> {
  const { rows } = await database.query<{ server_version: string }>('SHOW server_version');
  const info = await redis.info('server');
  const require = createRequire(import.meta.url);
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: rows[0]?.server_version ?? 'unknown',
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    autocannon: (require('autocannon/package.json') as { version: string }).version,
    commit: commitOf(root),
    loadAverage: os.loadavg()[0] ?? 0,
  };
}

function commitOf(root: string): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'src', 'prisma', 'schema', 'package.json') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes to the product' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

// CPU accounting from /proc: what the processes under test used, and how busy the machine was,
// so that a figure can be read against what else the shared machine was doing.

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/PID/stat after the command name, which may itself hold spaces and parentheses. */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The process and all its descendants (a cluster's primary and its workers). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (!Number.isFinite(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

/** User plus system CPU time of the processes, in milliseconds. */
export function cpuMilliseconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    // utime and stime are fields 14 and 15 of stat; 11 and 12 once pid, comm and state are gone.
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

export interface MachineCpu {
  busy: number;
  total: number;
}

export function machineCpu(): MachineCpu {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = values.map(Number);
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th columns.
  return { busy: total - (ticks[3] ?? 0) - (ticks[4] ?? 0), total };
}

export function busyPercent(before: MachineCpu, after: MachineCpu): number {
  const total = after.total - before.total;
  return total > 0 ? (100 * (after.busy - before.busy)) / total : 0;
}
