import { randomUUID } from 'node:crypto';
import { ZookeeperServer } from '../harness/zookeeper-server.js';
import { describeFootprint } from './footprint-runner.js';

const rootPath = `/ndl-footprint-${randomUUID().slice(0, 8)}`;
let server: ZookeeperServer;

describeFootprint({
  name: 'zookeeper',
  kinds: ['plain', 'read', 'fair'],
  async start() {
    server = await ZookeeperServer.start();
  },
  async stop() {
    await server?.destroy();
  },
  options: () => ({ type: 'zookeeper', url: server.connectionString, rootPath }),
  /** Every znode of the server (`mntr`'s zk_znode_count), the root path and ZooKeeper's own included. */
  async count() {
    const match = /zk_znode_count\s+(\d+)/.exec(await server.fourLetter('mntr'));
    if (!match) throw new Error('mntr gave no zk_znode_count');
    return Number(match[1]);
  },
  // A key's parent node goes a second after its last release, or when the backend closes.
  keepsUntilIdle: false,
  settleMs: 10_000,
});
