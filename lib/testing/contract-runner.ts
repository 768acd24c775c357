/**
 * The functions of your test runner the contract suite registers its tests with. jest and vitest
 * pass their globals as they are (`{ describe, it, beforeAll, afterAll }`); with `node:test`:
 *
 * ```ts
 * import { after, before, describe, it } from 'node:test';
 * const runner = {
 *   describe,
 *   it: (name, fn, timeout) => it(name, { timeout }, fn),
 *   beforeAll: (fn, timeout) => before(fn, { timeout }),
 *   afterAll: (fn, timeout) => after(fn, { timeout }),
 * };
 * ```
 */
export interface ContractTestRunner {
  /** A group of tests (`describe`). */
  describe(name: string, body: () => void): unknown;
  /** A test; `timeoutMs` is how long it may take (the suite gives it for its slow tests only). */
  it(name: string, test: () => Promise<void>, timeoutMs?: number): unknown;
  /** A hook run once before the group's tests. */
  beforeAll(hook: () => Promise<void>, timeoutMs?: number): unknown;
  /** A hook run once after the group's tests. */
  afterAll(hook: () => Promise<void>, timeoutMs?: number): unknown;
}

/**
 * The runner with every test and hook holding a ref'd timer while it runs: the engine's timers are
 * unref'd (they never keep an app alive), and a runner such as `node:test` cancels a test whose
 * promise waits on nothing else.
 */
export function keepingAlive(runner: ContractTestRunner): ContractTestRunner {
  const alive = (body: () => Promise<void>) => async () => {
    const timer = setInterval(() => undefined, 60_000);
    try {
      await body();
    } finally {
      clearInterval(timer);
    }
  };
  return {
    describe: (name, body) => runner.describe(name, body),
    it: (name, test, timeoutMs) => runner.it(name, alive(test), timeoutMs),
    beforeAll: (hook, timeoutMs) => runner.beforeAll(alive(hook), timeoutMs),
    afterAll: (hook, timeoutMs) => runner.afterAll(alive(hook), timeoutMs),
  };
}
