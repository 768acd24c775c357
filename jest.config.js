/** jest in native ESM mode (NestJS 12 is ESM-only): run through `npm test`, which sets --experimental-vm-modules. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/fixtures/'],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  globalSetup: '<rootDir>/test/support/check-dist.mjs',
  maxWorkers: 2,
  // Each ESM suite's modules stay in the worker's heap (2+ GB after a full run); a worker that big takes
  // longer than jest's 500 ms to exit and is killed ("A worker process has failed to exit gracefully").
  // Restarted past 1 GB after a suite, workers stay small and exit at once.
  workerIdleMemoryLimit: '1GB',
  testTimeout: 30_000,
};
