import { randomUUID } from 'node:crypto';
import { createLockBackend, type ZookeeperBackendOptions } from '../../lib/index.js';
import { freePort } from '../harness/free-port.js';
import { ZOOKEEPER_TICK_MS, ZookeeperServer } from '../harness/zookeeper-server.js';
import { ZkAdmin } from '../zookeeper/zk-admin.js';
import { describeBackendContract } from './backend-contract.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';
import { describeReadWriteContract } from './read-write-contract.js';
import type { ContractTarget } from './contract-target.js';

/** A session long enough for the suite's 5 s leases, short enough for a quick crash test (the server allows 1..10 s). */
const SESSION_TIMEOUT_MS = 6_000;
const rootPath = `/ndl-contract-${randomUUID().slice(0, 8)}`;
let server: ZookeeperServer | undefined;
let admin: ZkAdmin | undefined;
/** Both suites below share one server: started by the first, stopped by the last. */
let users = 0;

function options(): ZookeeperBackendOptions {
  return { type: 'zookeeper', url: server!.connectionString, sessionTimeoutMs: SESSION_TIMEOUT_MS, rootPath };
}

const target: ContractTarget = {
  name: 'zookeeper',
  fences: true,
  readWrite: true,
  async start() {
    users++;
    server ??= await ZookeeperServer.start();
    admin ??= await ZkAdmin.connect(server.connectionString);
  },
  async stop() {
    if (--users > 0) return;
    admin?.close();
    admin = undefined;
    await server?.destroy();
    server = undefined;
  },
  createBackend: () => createLockBackend(options()),
  processConfig: options,
  async expireLock(storeKey) {
    await admin!.deleteHolderNode(rootPath, storeKey);
  },
  async createUnreachableBackend() {
    return createLockBackend({ type: 'zookeeper', url: `127.0.0.1:${await freePort()}`, connectTimeoutMs: 1_000 });
  },
  // The server notices a dead session on its next expiry tick after the timeout.
  crashFreeMs: () => SESSION_TIMEOUT_MS + 2 * ZOOKEEPER_TICK_MS,
};

describeBackendContract(target);
describeInspectionContract(target, { leases: false, holderFence: true, waiters: true, semaphores: false });
describeReadWriteContract(target);
describeHoldBoundsContract(target);
