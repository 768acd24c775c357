import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { BackendOptions, RedisReplicasOptions } from '../../lib/index.js';
import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { RedisSentinelGroup, SENTINEL_MASTER_NAME } from '../harness/redis-sentinel.js';
import { waitUntil } from '../harness/server-process.js';
import type { StartedStore } from './nemesis-stores.js';
import { isolatePorts, PROXY_ADDRESS } from './port-isolation.js';

/** A lease as on the single node; a member stays isolated long enough for a failover (Sentinel: down after 1.5 s; Cluster: node timeout 2 s). */
const LEASE_MS = 1_000;
const ISOLATION_MS = 6_000;
/**
 * The Sentinels' failover-timeout (test/harness/redis-sentinel.ts): they fail a master name over
 * again only twice this long after the last failover began (a kill sooner waited 20-60 s).
 */
const SENTINEL_FAILOVER_TIMEOUT_MS = 10_000;
const run = promisify(execFile);

// The proxies connect to the data nodes from PROXY_ADDRESS (127.0.0.2), so that port rules can cut a
// node off from its peers and not from its clients: the harness starts every Redis with protected
// mode (which accepts only 127.0.0.1 without a password) off, a restarted one included.

/** The client's proxy for each real port, as ioredis natMap entries ('127.0.0.1:<real>' → the proxy). */
function natMap(
  endpoints: readonly number[],
  ports: readonly number[],
): Record<string, { host: string; port: number }> {
  return Object.fromEntries(endpoints.map((real, i) => [`127.0.0.1:${real}`, { host: '127.0.0.1', port: ports[i] }]));
}

/**
 * Whether the Sentinel clients use ioredis's `failoverDetector` (NEMESIS_SENTINEL_FAILOVER_DETECTOR=1).
 * Off by default, as docs/backends/redis.md advises (it left clients closed for good in the failover
 * suite): a client then moves to a new master when the old one answers again, demoted (READONLY).
 */
const SENTINEL_FAILOVER_DETECTOR = process.env.NEMESIS_SENTINEL_FAILOVER_DETECTOR === '1';

/**
 * Redis Sentinel: 1 master, 2 replicas, 3 Sentinels, no persistence. Each client reaches every
 * Sentinel and data node through its own proxies (natMap). The leader is the master; `replicas`:
 * the backend's replica acknowledgement.
 */
export async function sentinelStore(name: string, replicas?: RedisReplicasOptions): Promise<StartedStore> {
  const group = await RedisSentinelGroup.start(2);
  const sentinelPorts = group.sentinelAddresses.map(({ port }) => port);
  let lastKillAt = -Infinity;
  const endpoints = [...sentinelPorts, ...group.nodes.keys()];
  return {
    name,
    endpoints,
    leaseMs: LEASE_MS,
    lossMs: LEASE_MS + 300,
    isolationMs: ISOLATION_MS,
    proxyFrom: endpoints.map((_, e) => (e < sentinelPorts.length ? undefined : PROXY_ADDRESS)),
    clientConfig: (ports) =>
      ({
        type: 'redis',
        topology: 'sentinel',
        name: SENTINEL_MASTER_NAME,
        replicas,
        failoverDetector: SENTINEL_FAILOVER_DETECTOR,
        sentinels: sentinelPorts.map((_, i) => ({ host: '127.0.0.1', port: ports[i] })),
        natMap: natMap(endpoints, ports),
      }) as unknown as BackendOptions,
    async isolateMember(_which, { peersOnly }) {
      const port = await group.masterPort();
      return { member: `master ${port}`, heal: isolatePorts([port], { peersOnly }) };
    },
    async killLeader() {
      await sleep(Math.max(0, lastKillAt + 2 * SENTINEL_FAILOVER_TIMEOUT_MS + 1_000 - performance.now()));
      // Each Sentinel names the same master, which answers as one: the last failover's reconfiguration is over.
      await waitUntil(
        'the Sentinels to agree on a master',
        async () => {
          const named = await Promise.all(
            sentinelPorts.map(
              async (port) =>
                (
                  await run('redis-cli', [
                    '-p',
                    String(port),
                    'SENTINEL',
                    'GET-MASTER-ADDR-BY-NAME',
                    SENTINEL_MASTER_NAME,
                  ])
                ).stdout.split('\n')[1],
            ),
          );
          return (
            named.every((port) => port === named[0]) &&
            group.nodes.get(Number(named[0]))?.cli('ROLE').startsWith('master') === true
          );
        },
        60_000,
        100,
      );
      const { master } = await group.roles();
      lastKillAt = performance.now();
      await master.kill();
      return {
        member: `master ${master.port}`,
        promoted: async () => void (await group.awaitPromotion(master.port)),
        rejoin: () => group.rejoin(master.port),
      };
    },
    restart: () => Promise.reject(new Error(`${name}: no restart fault (the failover suite kills masters)`)),
    stop: () => group.stop(),
  };
}

/**
 * Redis Cluster: 3 masters with 1 replica each (node timeout 2 s), no persistence. Each client
 * reaches every node through its own proxies (natMap). The leader is the master of the lock key's
 * slot; isolating it drops its client and bus ports and its own links to the other nodes' bus ports.
 */
export async function clusterStore(name: string, replicas?: RedisReplicasOptions): Promise<StartedStore> {
  const cluster = await RedisCluster.start(3, { replicasPerMaster: 1, nodeTimeoutMs: 2_000 });
  const endpoints = cluster.ports;
  /**
   * The slot of `storeKey`'s lock and its nodes, once the cluster has settled from the last fault
   * (a master isolated or killed in an earlier row or round may still be flagged failed, or its
   * replica not yet in sync): each fault starts from a whole cluster.
   */
  const slotOf = async (storeKey: string) => {
    const slot = Number(await cluster.cli(endpoints[0], 'CLUSTER', 'KEYSLOT', redisLockKeys(storeKey).lock));
    return { slot, ...(await cluster.settled(slot)) };
  };
  return {
    name,
    endpoints,
    leaseMs: LEASE_MS,
    lossMs: LEASE_MS + 300,
    isolationMs: ISOLATION_MS,
    proxyFrom: endpoints.map(() => PROXY_ADDRESS),
    clientConfig: (ports) =>
      ({
        type: 'redis',
        topology: 'cluster',
        replicas,
        startupNodes: ports.map((port) => ({ host: '127.0.0.1', port })),
        natMap: natMap(endpoints, ports),
      }) as unknown as BackendOptions,
    async isolateMember(_which, { storeKey, peersOnly }) {
      const { slot, master } = await slotOf(storeKey);
      return {
        member: `master ${master} (slot ${slot})`,
        heal: isolatePorts([master, master + 10_000], { peersOnly, pid: cluster.node(master).pid }),
      };
    },
    async killLeader(storeKey) {
      const { slot, master, replicas } = await slotOf(storeKey);
      const observer = endpoints.find((port) => port !== master && !replicas.includes(port))!;
      await cluster.node(master).kill();
      return {
        member: `master ${master} (slot ${slot})`,
        promoted: async () => void (await cluster.awaitPromotion(slot, master, observer)),
        rejoin: () => cluster.rejoin(master),
      };
    },
    leaderEndpoint: async (storeKey) => endpoints.indexOf((await slotOf(storeKey)).master),
    restart: () => Promise.reject(new Error(`${name}: no restart fault (the failover suite kills masters)`)),
    stop: () => cluster.stop(),
  };
}
