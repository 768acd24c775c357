import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const run = promisify(execFile);

/** A throwaway Redis Cluster of `masters` masters (no replicas) on 127.0.0.1, data in a temp dir. */
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

  static async start(masters = 3): Promise<RedisCluster> {
    const binary = requireBinary('/usr/bin/redis-server', 'redis-server');
    requireBinary('/usr/bin/redis-cli', 'redis-server');
    const dir = tempDir('redis-cluster');
    const ports = await clusterPorts(masters);
    const nodes = ports.map((port) => {
      const node = new ServerProcess(`redis-cluster-${port}`, binary, [
        '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000',
      ]);
      node.start();
      return node;
    });
    const cluster = new RedisCluster(ports, nodes, dir);
    try {
      for (const port of ports) await waitUntil(`redis cluster node ${port}`, async () => (await cluster.cli(port, 'PING')) === 'PONG', 10_000);
      await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes']);
      await waitUntil('cluster_state:ok on every node', async () => {
        const states = await Promise.all(ports.map((port) => cluster.cli(port, 'CLUSTER', 'INFO')));
        return states.every((info) => info.includes('cluster_state:ok'));
      }, 20_000, 100);
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
