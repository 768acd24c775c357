// One measurement slot, run in a fresh child process by the runner:
//   node bench/lib/slot.mjs '<json spec>'  → prints one line `RESULT <json>` on stdout.
// With spec.sync, it prints `READY` once connected and warmed up, and starts on a `go` line on stdin
// (the 4-process contended workload starts all processes together).
import { createInterface } from 'node:readline';
import { CONTENDERS } from './contenders.mjs';
import { throughput } from '../workloads/throughput.mjs';
import { contended } from '../workloads/contended.mjs';
import { renewal } from '../workloads/renewal.mjs';
import { memory } from '../workloads/memory.mjs';
import { startHttpApp } from '../workloads/http-server.mjs';

const spec = JSON.parse(process.argv[2]);
// Resolves once the line is handed to the pipe: a large result (hundreds of thousands of holds) must not be cut by the exit.
const emit = (value) => new Promise((resolve) => process.stdout.write(`RESULT ${JSON.stringify(value)}\n`, resolve));

async function redisClient(url) {
  const { Redis } = await import('ioredis');
  const client = new Redis(url);
  await client.ping();
  return client;
}

function waitForGo() {
  process.stdout.write('READY\n');
  const lines = createInterface({ input: process.stdin });
  return new Promise((resolve) => lines.once('line', () => (lines.close(), resolve())));
}

async function main() {
  if (spec.workload === 'http') {
    const app = await startHttpApp(spec);
    process.stdout.write(`PORT ${app.port}\n`);
    // Runs until the runner closes stdin; `mark` starts counting this process's CPU time, `cpu` prints it (µs).
    const lines = createInterface({ input: process.stdin });
    let mark = process.cpuUsage();
    lines.on('line', (line) => {
      if (line === 'mark') mark = process.cpuUsage();
      if (line !== 'cpu') return;
      const used = process.cpuUsage(mark);
      process.stdout.write(`CPU ${used.user + used.system}\n`);
    });
    await new Promise((resolve) => lines.once('close', resolve));
    await app.close();
    return;
  }
  const contender = CONTENDERS[spec.contender];
  if (!contender) throw new Error(`unknown contender ${spec.contender}`);
  const lock = await contender.open(spec);
  let result;
  switch (spec.workload) {
    case 'throughput':
      result = await throughput(lock, spec);
      break;
    case 'contended': {
      // The critical section's own connection, the same for every contender.
      const counter = spec.insideIncr ? await redisClient(spec.url) : undefined;
      const inside = counter && (() => counter.incr(spec.insideIncr));
      result = await contended(lock, { ...spec, inside, waitForGo: spec.sync ? waitForGo : undefined });
      await counter?.quit();
      break;
    }
    case 'renewal':
      result = await renewal(lock, spec);
      break;
    case 'memory':
      result = await memory(lock, spec);
      break;
    default:
      throw new Error(`unknown workload ${spec.workload}`);
  }
  await lock.close();
  await emit(result);
}

main().then(
  () => {
    // A peer that leaves a timer behind must not stretch the slot.
    setTimeout(() => process.exit(0), 200).unref();
  },
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exitCode = 1;
  },
);
