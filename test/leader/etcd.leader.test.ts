import { EtcdServer } from '../harness/etcd-server.js';
import { describeLeaderSuite } from './leader-suite.js';

// One etcd 3.4 member and 2 s leases: a killed or paused leader's lease lapses, and with it its key
// (concurrency.Election's shape: the lowest create revision under the prefix leads).
const LEASE_TTL_SECONDS = 2;
let server: EtcdServer;

describeLeaderSuite({
  name: 'etcd',
  async start() {
    server = await EtcdServer.start();
    return {
      name: 'etcd',
      backend: () => ({
        type: 'etcd',
        urls: server.url,
        leaseTtlMs: LEASE_TTL_SECONDS * 1_000,
        requestTimeoutMs: 1_500,
      }),
      leaseMs: 2_000,
      lossMs: LEASE_TTL_SECONDS * 1000 + 1_300,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
