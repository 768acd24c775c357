import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { isOnlineReplica } from './redis-server.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const run = promisify(execFile);

/** Where a slot lives: the ports of its master and of the master's replicas. */
export interface SlotNodes {
  readonly master: number;
  readonly replicas: number[];
}

/**
 * A throwaway Redis Cluster of `masters` masters (and `replicasPerMaster` replicas each) on
 * 127.0.0.1, data in a temp dir. A killed node restarted with `rejoin()` comes back with its
 * cluster config and joins as a replica of whoever took over its slots.
 */
export class RedisCluster {
  private constructor(
    readonly ports: number[],
    private readonly nodes: ServerProcess[],
    private readonly dir: string,
  ) {}

  /** `host:port` of every master, for an ioredis Cluster client's startup nodes. */
  get startupNodes(): { host: string; port: number }[] {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }));
  }

  static async start(masters = 3, { replicasPerMaster = 0, nodeTimeoutMs = 5_000 } = {}): Promise<RedisCluster> {
    const binary = requireBinary('/usr/bin/redis-server', 'redis-server');
    requireBinary('/usr/bin/redis-cli', 'redis-server');
    const dir = tempDir('redis-cluster');
    const ports = await clusterPorts(masters * (1 + replicasPerMaster));
    const nodes = ports.map((port) => {
      const node = new ServerProcess(`redis-cluster-${port}`, binary, [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        // As RedisServer: the fault suites' proxies connect from 127.0.0.2, a rejoined node's first connection included.
        '--protected-mode',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        '--repl-diskless-load',
        'on-empty-db',
        '--repl-diskless-sync-delay',
        '0',
      ]);
      node.start();
      return node;
    });
    const cluster = new RedisCluster(ports, nodes, dir);
    try {
      for (const port of ports)
        await waitUntil(`redis cluster node ${port}`, async () => (await cluster.cli(port, 'PING')) === 'PONG', 10_000);
      await run('redis-cli', [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicasPerMaster),
        '--cluster-yes',
      ]);
      await waitUntil(
        'cluster_state:ok on every node',
        async () => {
          const states = await Promise.all(ports.map((port) => cluster.cli(port, 'CLUSTER', 'INFO')));
          return states.every((info) => info.includes('cluster_state:ok'));
        },
        20_000,
        100,
      );
      if (replicasPerMaster > 0) await cluster.awaitReplicasInSync(ports);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  async cli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
    return stdout.trim();
  }

  /** The node process on `port` (to kill, pause or resume it). */
  node(port: number): ServerProcess {
    return this.nodes[this.ports.indexOf(port)];
  }

  /** The master and replicas that serve `slot` now, as `liveNode` sees the cluster. */
  async slotNodes(slot: number, liveNode: number): Promise<SlotNodes> {
    const lines = (await this.cli(liveNode, 'CLUSTER', 'NODES')).split('\n').map((line) => line.split(' '));
    const portOf = (address: string) => Number(address.split('@')[0].split(':')[1]);
    const master = lines.find(
      (parts) =>
        parts[2].includes('master') &&
        !parts[2].includes('fail') &&
        parts.slice(8).some((range) => {
          const [from, to = from] = range.split('-').map(Number) as [number, number?];
          return slot >= from && slot <= to;
        }),
    );
    if (!master) throw new Error(`no live master serves slot ${slot} (as seen from ${liveNode})`);
    const replicas = lines.filter((parts) => parts[3] === master[0]).map((parts) => portOf(parts[1]));
    return { master: portOf(master[1]), replicas };
  }

  /**
   * Waits until the cluster has settled after a fault: every node reports `cluster_state:ok` and
   * names the same live master for `slot`, which answers as a master and whose replicas are in sync.
   * Resolves that slot's nodes.
   */
  async settled(slot: number, timeoutMs = 60_000): Promise<SlotNodes> {
    let nodes: SlotNodes | undefined;
    await waitUntil(
      `every cluster node agreeing on a live master for slot ${slot}`,
      async () => {
        const infos = await Promise.all(this.ports.map((port) => this.cli(port, 'CLUSTER', 'INFO')));
        if (!infos.every((info) => info.includes('cluster_state:ok'))) return false;
        const views = await Promise.all(this.ports.map((port) => this.slotNodes(slot, port).catch(() => undefined)));
        const first = views[0];
        if (!first || !views.every((view) => view?.master === first.master)) return false;
        if (!(await this.cli(first.master, 'ROLE')).startsWith('master')) return false;
        const replication = await this.cli(first.master, 'INFO', 'replication');
        if (!first.replicas.every((replica) => isOnlineReplica(replication, replica))) return false;
        nodes = first;
        return true;
      },
      timeoutMs,
      100,
    );
    return nodes!;
  }

  /** Waits until a node other than `oldMaster` serves `slot` and answers as its master; resolves its port. */
  async awaitPromotion(slot: number, oldMaster: number, liveNode: number, timeoutMs = 60_000): Promise<number> {
    let port = oldMaster;
    await waitUntil(
      `a cluster failover of slot ${slot} away from ${oldMaster}`,
      async () => {
        port = (await this.slotNodes(slot, liveNode)).master;
        return port !== oldMaster && (await this.cli(port, 'ROLE')).startsWith('master');
      },
      timeoutMs,
      50,
    );
    return port;
  }

  /** Restarts a killed node with its cluster config: it rejoins as a replica of whoever took its slots; waits until it is in sync. */
  async rejoin(port: number): Promise<void> {
    const node = this.node(port);
    node.start();
    await waitUntil(
      `cluster node ${port} back as an online replica`,
      async () => {
        const info = await this.cli(port, 'INFO', 'replication');
        const master = /master_port:(\d+)/.exec(info)?.[1];
        return (
          info.includes('master_link_status:up') &&
          isOnlineReplica(await this.cli(Number(master), 'INFO', 'replication'), port)
        );
      },
      60_000,
      100,
    );
  }

  private async awaitReplicasInSync(ports: number[]): Promise<void> {
    await waitUntil(
      'every cluster replica in sync',
      async () => {
        const infos = await Promise.all(ports.map((port) => this.cli(port, 'INFO', 'replication')));
        const online = infos.join('\n');
        return infos.every(
          (info, i) =>
            info.includes('role:master') ||
            (info.includes('master_link_status:up') && isOnlineReplica(online, ports[i])),
        );
      },
      30_000,
      100,
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
    removeDir(this.dir);
  }
}

/** Ports p where both p and its cluster bus port p + 10000 are free. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (ports.includes(port)) continue;
    if ((await isFree(port)) && (await isFree(port + 10_000))) ports.push(port);
  }
  return ports;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
