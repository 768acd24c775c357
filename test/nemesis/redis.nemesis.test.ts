import { describeNemesis } from './nemesis-suite.js';

// Redis without persistence: a restart loses the lock key, so the holder of before the restart and
// the next one overlap (its fence counter restarts from the server clock: the fence guard refuses
// the old holder's writes). See docs/faults.md.
describeNemesis('redis', undefined, {
  overlapsExpected: { 'restart store': 'a restart without persistence loses the lock' },
});
