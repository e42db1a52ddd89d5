import cluster from 'node:cluster';
import { resolve } from 'node:path';

// `node --import tsx test/bench/cluster.ts COUNT SCRIPT [ARGS…]`: COUNT copies of SCRIPT sharing
// the port they listen on, through node:cluster, as the product's WEB_CONCURRENCY runs its API:
// how the "all cores" layout runs the baseline.

const [countArgument, script, ...args] = process.argv.slice(2);
const count = Number(countArgument);
if (!Number.isInteger(count) || count < 1 || !script) {
  process.stderr.write('usage: cluster.ts COUNT SCRIPT [ARGS…]\n');
  process.exit(2);
}

// Workers inherit this process's execArgv, so the tsx loader and --cpu-prof reach them too.
cluster.setupPrimary({ exec: resolve(script), args });

let listening = 0;
let exited = 0;
let stopping = false;
let exitCode = 0;

function stop(code: number) {
  exitCode = Math.max(exitCode, code);
  if (stopping) return;
  stopping = true;
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
}

cluster.on('listening', () => {
  listening += 1;
  // One line once every copy listens: the harness waits for it, since /health alone would
  // answer as soon as the first copy does.
  if (listening === count) process.stdout.write(`cluster: ${count} processes listening\n`);
});

cluster.on('exit', (worker, code, signal) => {
  exited += 1;
  if (!stopping) {
    process.stderr.write(
      `cluster: process ${worker.process.pid} exited (${code ?? signal}); stopping the others\n`,
    );
    stop(1);
  } else if (code !== 0) {
    exitCode = 1;
  }
  if (exited === count) process.exit(exitCode);
});

process.once('SIGTERM', () => stop(0));
process.once('SIGINT', () => stop(0));

for (let index = 0; index < count; index += 1) cluster.fork();
