import { postgresTarget } from '../sql/postgres-target.js';
import { describeTickSuite } from './tick-suite.js';

const target = postgresTarget();

describeTickSuite({
  name: 'postgres',
  start: () => target.start(),
  stop: () => target.stop(),
  processConfig: () => target.options(),
  minHold: true,
  periodMs: 1_000,
  // The row's expiry is the 2 s lease, by the database clock.
  crashFreeMs: 2_000,
});
