import { Etcd3 } from 'etcd3';
import { EtcdServer } from '../harness/etcd-server.js';
import { describeFootprint } from './footprint-runner.js';

let server: EtcdServer;
let admin: Etcd3;

describeFootprint({
  name: 'etcd',
  kinds: ['plain', 'read', 'fair', 'semaphore'],
  async start() {
    server = await EtcdServer.start();
    admin = new Etcd3({ hosts: server.url });
  },
  async stop() {
    admin?.close();
    await server?.destroy();
  },
  options: () => ({ type: 'etcd', urls: server.url }),
  /** Every key in etcd (what it keeps of deleted keys, its revision history, goes with compaction). */
  count: () => admin.getAll().count(),
  // A claim's key goes at release (or with the backend's lease).
  keepsUntilIdle: false,
  settleMs: 10_000,
});
