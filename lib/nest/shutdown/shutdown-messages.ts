/** The error and log texts of the stop-accepting step. */
export const ShutdownMessages = {
  option: (got: string) => `DistributedLockModule: stopAcceptingOnShutdown must be a boolean, got ${got}`,
  stillUnderWay: (count: number, waitedMs: number) =>
    `${count} HTTP request(s) still under way after ${waitedMs} ms (gracefulShutdownTimeoutMs): the lock store drains now, and refuses them new locks`,
};
