import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { RedisServer } from './redis-server.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const run = promisify(execFile);

/** The name the Sentinels monitor the group under. */
export const SENTINEL_MASTER_NAME = 'locks';

/**
 * A throwaway Sentinel-managed group on 127.0.0.1: one master, `replicaCount` replicas and three
 * Sentinels (quorum 2, down-after 1500 ms: 1000 ms was seen failing over twice in a row on a
 * loaded 2-core machine). No persistence. `failOver()` kills the master and waits for the promotion.
 */
export class RedisSentinelGroup {
  private constructor(
    /** Every data node, master and replicas, by port (the master changes with each failover). */
    readonly nodes: Map<number, RedisServer>,
    private readonly sentinels: { port: number; process: ServerProcess }[],
    private readonly dir: string,
  ) {}

  /** `{ host, port }` of each Sentinel, for an ioredis client's `sentinels`. */
  get sentinelAddresses(): { host: string; port: number }[] {
    return this.sentinels.map(({ port }) => ({ host: '127.0.0.1', port }));
  }

  static async start(replicaCount = 2): Promise<RedisSentinelGroup> {
    const binary = requireBinary('/usr/bin/redis-server', 'redis-server');
    const master = await RedisServer.start();
    const nodes = new Map([[master.port, master]]);
    const dir = tempDir('redis-sentinel');
    const group = new RedisSentinelGroup(nodes, [], dir);
    try {
      for (let i = 0; i < replicaCount; i++) {
        const replica = await RedisServer.startReplica(master);
        nodes.set(replica.port, replica);
      }
      for (let i = 0; i < 3; i++) {
        const port = await freePort();
        const conf = join(dir, `sentinel-${port}.conf`);
        writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 2`,
            `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1500`,
            `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 10000`,
            `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 2`,
            '',
          ].join('\n'),
        );
        const sentinel = new ServerProcess(`redis-sentinel-${port}`, binary, [conf, '--sentinel']);
        sentinel.start();
        group.sentinels.push({ port, process: sentinel });
      }
      // Every Sentinel knows the replicas and the other Sentinels (hello messages every 2 s).
      await waitUntil(
        'the Sentinels to see every replica and each other',
        async () => {
          const views = await Promise.all(
            group.sentinels.map(({ port }) => sentinelCli(port, 'SENTINEL', 'MASTER', SENTINEL_MASTER_NAME)),
          );
          return views.every(
            (view) => field(view, 'num-slaves') === String(replicaCount) && field(view, 'num-other-sentinels') === '2',
          );
        },
        30_000,
        200,
      );
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  /** The port of the master the Sentinels name now. */
  async masterPort(): Promise<number> {
    const reply = await sentinelCli(
      this.sentinels[0].port,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      SENTINEL_MASTER_NAME,
    );
    return Number(reply.split('\n')[1]);
  }

  /** The current master and its replicas. */
  async roles(): Promise<{ master: RedisServer; replicas: RedisServer[] }> {
    const port = await this.masterPort();
    return { master: this.nodes.get(port)!, replicas: [...this.nodes.values()].filter((node) => node.port !== port) };
  }

  /** Waits until the Sentinels promoted a node other than `oldPort` and it answers as a master; resolves its port. */
  async awaitPromotion(oldPort: number, timeoutMs = 60_000): Promise<number> {
    let port = oldPort;
    await waitUntil(
      `a Sentinel failover away from ${oldPort}`,
      async () => {
        port = await this.masterPort();
        return port !== oldPort && this.nodes.get(port)?.cli('ROLE').startsWith('master') === true;
      },
      timeoutMs,
      50,
    );
    return port;
  }

  /** Restarts a killed node (empty, as after a crash) as a replica of the current master, and waits until it is in sync. */
  async rejoin(port: number): Promise<void> {
    const node = this.nodes.get(port)!;
    await node.restart();
    const master = await this.masterPort();
    node.cli('REPLICAOF', '127.0.0.1', String(master));
    await this.nodes.get(master)!.awaitReplicaOnline(port);
  }

  async stop(): Promise<void> {
    await Promise.all(this.sentinels.map(({ process }) => process.stop()));
    await Promise.all([...this.nodes.values()].map((node) => node.stop()));
    removeDir(this.dir);
  }
}

async function sentinelCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  return stdout.trim();
}

/** A field of a flat `SENTINEL MASTER` reply (name and value on alternate lines). */
function field(reply: string, name: string): string | undefined {
  const lines = reply.split('\n');
  const index = lines.indexOf(name);
  return index >= 0 ? lines[index + 1] : undefined;
}
