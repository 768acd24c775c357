import { EtcdServer } from '../harness/etcd-server.js';
import { describeFaultSuite } from './fault-suite.js';

// One etcd 3.4 member and 2 s leases (etcd's minimum with default timings): a paused or blocked
// holder's lease lapses, and with it its lock key. "restart store" keeps the data dir.
const LEASE_TTL_SECONDS = 2;
let server: EtcdServer;

describeFaultSuite({
  name: 'etcd',
  fenced: true,
  async start() {
    server = await EtcdServer.start();
    return {
      name: 'etcd',
      workerConfig: () => ({
        type: 'etcd',
        urls: server.url,
        leaseTtlMs: LEASE_TTL_SECONDS * 1_000,
        requestTimeoutMs: 1_500,
      }),
      leaseMs: 1_000,
      // The TTL, plus etcd's expiry sweep (every 500 ms) and margin.
      lossMs: LEASE_TTL_SECONDS * 1000 + 1_300,
      restartStore: () => server.restart(),
      freezeStore: () => server.pause(),
      thawStore: () => server.resume(),
    };
  },
  stop: async () => server?.destroy(),
});
