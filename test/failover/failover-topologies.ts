import { redisLockKeys } from '../../lib/backends/redis/redis-keys.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { RedisSentinelGroup, SENTINEL_MASTER_NAME } from '../harness/redis-sentinel.js';

/** When one failover's steps happened (performance.now()). */
export interface FailoverTimes {
  /** Replication to every replica of the master was cut. */
  readonly cutAt: number;
  /** The master was SIGKILLed (the replicas resumed). */
  readonly killedAt: number;
  /** A replica answers as the new master. */
  readonly promotedAt: number;
}

/** A replicated Redis deployment the harness can fail over again and again. */
export interface FailoverTopology {
  readonly name: string;
  /** Lock keys (without the prefix) whose master the failovers kill: all on one master. */
  readonly keys: string[];
  /** The client part of the worker config (see failover-worker.mjs). */
  workerClient(): Record<string, unknown>;
  /**
   * Cuts replication from the keys' master (its replicas SIGSTOPped, their links killed), lets it
   * take writes alone for `windowMs`, SIGKILLs it, resumes the replicas and waits for a promotion;
   * then restarts the killed node as a replica and waits until it is in sync.
   */
  failOver(windowMs: number): Promise<FailoverTimes>;
  /** Who is master and replica now, for a failure message. */
  describe(): Promise<string>;
  stop(): Promise<void>;
}

export const KEY_PREFIX = 'failover:';
const KEY_COUNT = 8;

/** The master a failover kills, and its replicas. */
interface Victim {
  cutLinks(): Promise<unknown>;
  kill(): Promise<void>;
  readonly replicas: { pause(): void; resume(): void }[];
}

/** Cutting replication first is what makes writes unreplicated: on loopback, a plain SIGKILL leaves the replicas up to date. */
async function cutAndKill(victim: Victim, windowMs: number): Promise<{ cutAt: number; killedAt: number }> {
  const cutAt = performance.now();
  for (const replica of victim.replicas) replica.pause();
  await victim.cutLinks();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  await victim.kill();
  const killedAt = performance.now();
  for (const replica of victim.replicas) replica.resume();
  return { cutAt, killedAt };
}

/** One master, two replicas, three Sentinels. */
export async function sentinelTopology(): Promise<FailoverTopology> {
  const group = await RedisSentinelGroup.start(2);
  return {
    name: 'Sentinel (1 master, 2 replicas, 3 Sentinels)',
    keys: Array.from({ length: KEY_COUNT }, (_, i) => `counter-${i}`),
    workerClient: () => ({
      topology: 'sentinel',
      sentinels: group.sentinelAddresses,
      masterName: SENTINEL_MASTER_NAME,
    }),
    async failOver(windowMs) {
      const { master, replicas } = await group.roles();
      const { cutAt, killedAt } = await cutAndKill(
        { cutLinks: async () => master.cli('CLIENT', 'KILL', 'TYPE', 'replica'), kill: () => master.kill(), replicas },
        windowMs,
      );
      await group.awaitPromotion(master.port);
      const promotedAt = performance.now();
      await group.rejoin(master.port);
      return { cutAt, killedAt, promotedAt };
    },
    async describe() {
      const roles = [...group.nodes.values()].map(
        (node) => `${node.port}: ${node.running ? node.cli('ROLE').split('\n').slice(0, 3).join(' ') : 'down'}`,
      );
      return `Sentinels name ${await group.masterPort()}; ${roles.join('; ')}`;
    },
    stop: () => group.stop(),
  };
}

/** Three masters with one replica each; the keys all live on the first master's slots. */
export async function clusterTopology(): Promise<FailoverTopology> {
  const cluster = await RedisCluster.start(3, { replicasPerMaster: 1, nodeTimeoutMs: 2_000 });
  const anyNode = cluster.ports[0];
  const slotOf = async (key: string) =>
    Number(await cluster.cli(anyNode, 'CLUSTER', 'KEYSLOT', redisLockKeys(KEY_PREFIX + key).lock));
  // Keys on one master, so that each failover hits every one of them.
  const keys: string[] = [];
  let firstMaster: number | undefined;
  for (let i = 0; keys.length < KEY_COUNT; i++) {
    const master = (await cluster.slotNodes(await slotOf(`counter-${i}`), anyNode)).master;
    firstMaster ??= master;
    if (master === firstMaster) keys.push(`counter-${i}`);
  }
  const slot = await slotOf(keys[0]);
  return {
    name: 'Cluster (3 masters, 1 replica each)',
    keys,
    workerClient: () => ({ topology: 'cluster', startupNodes: cluster.startupNodes }),
    async failOver(windowMs) {
      const { master, replicas } = await cluster.slotNodes(slot, anyNode);
      const observer = cluster.ports.find((port) => port !== master && !replicas.includes(port))!;
      const { cutAt, killedAt } = await cutAndKill(
        {
          cutLinks: () => cluster.cli(master, 'CLIENT', 'KILL', 'TYPE', 'replica'),
          kill: () => cluster.node(master).kill(),
          replicas: replicas.map((port) => cluster.node(port)),
        },
        windowMs,
      );
      await cluster.awaitPromotion(slot, master, observer);
      const promotedAt = performance.now();
      await cluster.rejoin(master);
      return { cutAt, killedAt, promotedAt };
    },
    describe: () => cluster.cli(anyNode, 'CLUSTER', 'NODES'),
    stop: () => cluster.stop(),
  };
}
