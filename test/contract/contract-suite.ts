import { afterAll, beforeAll, describe, it } from '@jest/globals';
import type { LockBackend } from '../../lib/backend.js';
import { useContractSuite as useSuite, type ContractSuite, type EngineSettings } from '../../lib/testing/contract-suite.js';
import type { ContractTestRunner } from '../../lib/testing/contract-runner.js';
import type { ContractTarget } from './contract-target.js';

export type { ContractSuite, EngineSettings };

/** jest's functions, as the shipped contract suite takes them. */
export const jestRunner: ContractTestRunner = { describe, it, beforeAll, afterAll };

/** The shipped suite's set-up (lib/testing/contract-suite.ts) under jest. */
export function useContractSuite(target: ContractTarget, name: string, defaults: Required<Omit<EngineSettings, 'instance'>>, wrap?: (backend: LockBackend) => LockBackend): ContractSuite {
  return useSuite(jestRunner, target, name, defaults, wrap);
}
