// What a release costs on a Redis Cluster: sharded pub/sub (SPUBLISH, the default on Redis >= 7)
// against the plain PUBLISH fallback, which the Cluster broadcasts to every node. A local 3-master
// Cluster; the keys all live on one master (the owner), so the other two only see what the release
// messages cost them. Rounds alternate between the two so that machine noise hits both alike.
//   npm run bench:cluster [-- --seconds 3 --rounds 5 --keys 16 --workers 1]
// Per key, two backends (each its own Cluster client, with `workers` callers each) take turns:
// acquire, release, acquire...; the one that waits is subscribed to the key's channel, so every
// release wakes somebody. With more than one worker most hand-offs stay within a backend (no release
// in Redis): then the table shows how often the key changes backend, which the release's subscriber
// count steers (a process whose turn ended stands back when others heard the release).
// Reported per round: releases/s, and per 1,000 releases the CPU time (INFO cpu, user + sys) of the
// owner and of the other nodes, the bytes the other nodes read (/proc/PID/io rchar: clients and the
// cluster bus), and the release messages the cluster bus brought them (CLUSTER INFO) per release
// message the owner sent (a release publishes only when somebody waits for the key).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { loadPackage } from './lib/package-under-test.mjs';
import { freePort, redisVersion, startRedis } from './lib/redis-server.mjs';
import { median, pairedRatio, round } from './lib/stats.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    keys: { type: 'string', default: '16' },
    workers: { type: 'string', default: '1' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const keyCount = Number(values.keys);
const workers = Number(values.workers);
const MASTERS = 3;

const { LockEngine, createLockBackend } = await loadPackage();
// Internal: a client carrying a kind under this registered symbol announces with it (sharded-pubsub.ts).
const PUB_SUB_KIND = Symbol.for('nestjs-distributed-lock.pub-sub-kind');

/** A port p with p + 10000 (its cluster bus port) free too. */
async function clusterPort() {
  for (;;) {
    const port = await freePort();
    if (
      port + 10_000 < 65_536 &&
      (await freePort(port + 10_000).then(
        () => true,
        () => false,
      ))
    )
      return port;
  }
}

async function startCluster() {
  const nodes = [];
  for (let i = 0; i < MASTERS; i++) {
    const port = await clusterPort();
    nodes.push(await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`], port));
  }
  execFileSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; !nodes.every((node) => node.cli('CLUSTER', 'INFO').includes('cluster_state:ok')); i++) {
    if (i > 400) throw new Error('the cluster did not come up');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return nodes;
}

const field = (text, name) => Number(new RegExp(`${name}:\\s*([\\d.]+)`).exec(text)?.[1] ?? 0);

function nodeCounters(node) {
  const cpu = node.cli('INFO', 'cpu');
  const bus = node.cli('CLUSTER', 'INFO');
  return {
    cpuMs: (field(cpu, 'used_cpu_user') + field(cpu, 'used_cpu_sys')) * 1_000,
    readBytes: field(readFileSync(`/proc/${node.pid}/io`, 'utf8'), 'rchar'),
    busMessages: ['publish', 'publishshard'].reduce(
      (sum, type) => sum + field(bus, `cluster_stats_messages_${type}_received`),
      0,
    ),
    sentMessages: ['publish', 'spublish'].reduce(
      (sum, command) =>
        sum + Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(node.cli('INFO', 'commandstats'))?.[1] ?? 0),
      0,
    ),
  };
}

/**
 * Resolves once the other nodes got everything `owner` relayed to them so far: a marker PUBLISHed on
 * `owner` reached a subscriber on each of them (the cluster bus delivers one node's messages in order).
 */
async function relayedSoFar(owner, others) {
  const listeners = others.map((node) => new Redis({ host: '127.0.0.1', port: node.port }));
  try {
    await Promise.all(listeners.map((listener) => listener.subscribe('bench:marker')));
    const heard = Promise.all(listeners.map((listener) => new Promise((resolve) => listener.once('message', resolve))));
    owner.cli('PUBLISH', 'bench:marker', 'marker');
    await heard;
  } finally {
    for (const listener of listeners) listener.disconnect();
  }
}

async function openEngine(nodes, kind) {
  const client = new Cluster(
    nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    { enableAutoPipelining: true },
  );
  if (kind === 'plain') client[PUB_SUB_KIND] = 'plain';
  await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
  const engine = new LockEngine(await createLockBackend({ type: 'redis', client }), {
    leaseMs: 10_000,
    waitMs: 60_000,
  });
  return { engine, client, close: async () => (await engine.close(), await client.quit()) };
}

/** `count` keys whose slots `owner` serves. */
function keysOn(owner, count) {
  const myself = owner
    .cli('CLUSTER', 'NODES')
    .split('\n')
    .find((line) => line.includes('myself'));
  const ranges = myself
    .split(' ')
    .slice(8)
    .map((range) => range.split('-').map(Number));
  const keys = [];
  for (let n = 0; keys.length < count; n++) {
    const key = `bench:cluster:${n}`;
    const slot = Number(owner.cli('CLUSTER', 'KEYSLOT', `{lock:${key}}`));
    if (ranges.some(([from, to = from]) => slot >= from && slot <= to)) keys.push(key);
  }
  return keys;
}

async function measure(nodes, pair, keys) {
  const before = nodes.map(nodeCounters);
  const until = performance.now() + seconds * 1_000;
  let releases = 0;
  let switches = 0;
  const lastHolder = new Map();
  const turns = async (engine, key) => {
    while (performance.now() < until) {
      const lock = await engine.acquire(key);
      if (lastHolder.get(key) !== engine) switches++;
      lastHolder.set(key, engine);
      await lock.release();
      releases++;
    }
  };
  const startedAt = performance.now();
  await Promise.all(
    keys.flatMap((key) => pair.flatMap(({ engine }) => Array.from({ length: workers }, () => turns(engine, key)))),
  );
  const elapsedS = (performance.now() - startedAt) / 1_000;
  await relayedSoFar(nodes[0], nodes.slice(1));
  const after = nodes.map(nodeCounters);
  // Less the marker that relayedSoFar sent each of the other nodes (and the owner published).
  const delta = (i, name) =>
    after[i][name] -
    before[i][name] -
    ((name === 'busMessages' && i > 0) || (name === 'sentMessages' && i === 0) ? 1 : 0);
  const releaseMessages = delta(0, 'sentMessages');
  const others = nodes.slice(1).map((_, j) => j + 1);
  const perK = (value) => (value / releases) * 1_000;
  return {
    'releases/s': releases / elapsedS,
    'acquisitions by the other backend than the last holder (%)': (switches / releases) * 100,
    'owner CPU ms per 1k releases': perK(delta(0, 'cpuMs')),
    'other nodes: CPU ms per 1k releases (each, mean)': perK(
      others.reduce((sum, i) => sum + delta(i, 'cpuMs'), 0) / others.length,
    ),
    'other nodes: bytes read per release (each, mean)':
      others.reduce((sum, i) => sum + delta(i, 'readBytes'), 0) / others.length / releases,
    'release messages sent per release': releaseMessages / releases,
    'other nodes: messages relayed per release message (each, mean)':
      others.reduce((sum, i) => sum + delta(i, 'busMessages'), 0) / others.length / releaseMessages,
  };
}

const nodes = await startCluster();
const pairs = {};
try {
  const keys = keysOn(nodes[0], keyCount);
  const kinds = ['sharded', 'plain'];
  for (const kind of kinds) pairs[kind] = [await openEngine(nodes, kind), await openEngine(nodes, kind)];
  const results = {};
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 ? [...kinds].reverse() : kinds) {
      for (const [metric, value] of Object.entries(await measure(nodes, pairs[kind], keys)))
        (results[metric] ??= { sharded: [], plain: [] })[kind].push(value);
    }
  }
  console.log(
    `release cost on a local ${MASTERS}-master Redis Cluster (redis ${redisVersion()}, node ${process.version}): ${keyCount} keys on one master, 2 backends taking turns on each; ${rounds} interleaved rounds of ${seconds} s, medians`,
  );
  console.log('metric | sharded (SPUBLISH) | plain (PUBLISH) | sharded / plain (paired, median)');
  for (const [metric, row] of Object.entries(results)) {
    console.log(
      `${metric} | ${round(median(row.sharded), 3)} | ${round(median(row.plain), 3)} | ${round(pairedRatio(row.sharded, row.plain), 3)}`,
    );
  }
} finally {
  await Promise.allSettled(
    Object.values(pairs)
      .flat()
      .map((open) => open.close()),
  );
  for (const node of nodes) node.stop();
}
