// process.hrtime is CLOCK_MONOTONIC on Linux: one clock for every process on the machine, so
// hand-offs between processes can be timed.
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
