import { RedisMasters } from '../harness/redis-masters.js';
import { describeFaultSuite } from './fault-suite.js';

// Five independent masters without persistence. "restart store" restarts ONE master (it comes back
// empty); "freeze store" freezes three of five, so no quorum can be had while they are stopped.
let masters: RedisMasters;
const FROZEN = [0, 1, 2];

describeFaultSuite({
  name: 'redlock',
  fenced: false,
  async start() {
    masters = await RedisMasters.start(5);
    return {
      name: 'redlock',
      workerConfig: () => ({ type: 'redlock', urls: masters.urls }),
      leaseMs: 1_000,
      lossMs: 1_600,
      restartStore: () => masters.restart(0),
      freezeStore: () => FROZEN.forEach((i) => masters.pause(i)),
      thawStore: () => FROZEN.forEach((i) => masters.resume(i)),
    };
  },
  stop: async () => masters?.stop(),
});
