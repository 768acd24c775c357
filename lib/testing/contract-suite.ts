import { randomUUID } from 'node:crypto';
import type { LockBackend } from '../engine/lock-backend.js';
import { LockEngine } from '../engine/lock-engine.js';
import type { ContractTestRunner } from './contract-runner.js';

export interface EngineSettings {
  readonly leaseMs?: number;
  readonly waitMs?: number;
  /** The engine's instance label (default `hostname:pid`). */
  readonly instance?: string;
}

/** What a contract suite runs against: engines over backends of the store under test. */
export interface ContractSuite {
  /** A prefix of this suite's own, so suites sharing a server never meet. */
  readonly keyPrefix: string;
  /** A fresh key: `name` plus a random tail. */
  key(name: string): string;
  /** A new engine over a new backend (another app instance), closed after the suite. */
  newEngine(settings?: EngineSettings, backend?: LockBackend): Promise<LockEngine>;
  /** Two engines over two backends, two app instances; set before the first test. */
  readonly a: LockEngine;
  readonly b: LockEngine;
}

interface SuiteTarget {
  createBackend(): Promise<LockBackend>;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/**
 * Starts the target before the suite and two engines on it; closes every engine the suite made
 * and stops the target after it. `wrap` decorates every backend (e.g. a spy).
 */
export function useContractSuite(
  runner: ContractTestRunner,
  target: SuiteTarget,
  name: string,
  defaults: Required<Omit<EngineSettings, 'instance'>>,
  wrap: (backend: LockBackend) => LockBackend = (backend) => backend,
): ContractSuite {
  const keyPrefix = `${name}:${randomUUID().slice(0, 8)}:`;
  const engines: LockEngine[] = [];
  const suite = {
    keyPrefix,
    key: (base: string) => `${base}:${randomUUID().slice(0, 8)}`,
    async newEngine(settings: EngineSettings = {}, backend?: LockBackend): Promise<LockEngine> {
      const engine = new LockEngine(backend ?? wrap(await target.createBackend()), {
        keyPrefix,
        ...defaults,
        ...settings,
      });
      engines.push(engine);
      return engine;
    },
    a: undefined as unknown as LockEngine,
    b: undefined as unknown as LockEngine,
  };

  runner.beforeAll(async () => {
    await target.start?.();
    suite.a = await suite.newEngine();
    suite.b = await suite.newEngine();
  }, 60_000);

  runner.afterAll(async () => {
    await Promise.allSettled(engines.map((engine) => engine.close()));
    await target.stop?.();
  }, 60_000);

  return suite;
}
