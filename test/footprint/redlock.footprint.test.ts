import { RedisMasters } from '../harness/redis-masters.js';
import { describeFootprint } from './footprint-runner.js';

let masters: RedisMasters;

describeFootprint({
  name: 'redlock',
  kinds: ['plain'],
  async start() {
    masters = await RedisMasters.start(3);
  },
  async stop() {
    await masters?.stop();
  },
  options: () => ({ type: 'redlock', urls: masters.urls }),
  /** Keys on all masters together. */
  async count() {
    const sizes = await Promise.all(masters.servers.map((_, i) => masters.command(i, 'DBSIZE')));
    return sizes.reduce((sum: number, size) => sum + Number(size), 0);
  },
  // Redlock keeps no fence counter: a lock key goes at release (or with its lease).
  keepsUntilIdle: false,
  settleMs: 10_000,
});
