/** The resource types a lock client keeps open: sockets and timers. */
const WATCHED = ['TCPSocketWrap', 'Timeout', 'Immediate'] as const;

export type ResourceCounts = Record<(typeof WATCHED)[number], number>;

/** Counts of this process's active sockets and timers (`process.getActiveResourcesInfo()`). */
export function countResources(): ResourceCounts {
  const counts = Object.fromEntries(WATCHED.map((type) => [type, 0])) as ResourceCounts;
  for (const type of process.getActiveResourcesInfo()) {
    if (type in counts) counts[type as keyof ResourceCounts]++;
  }
  return counts;
}

/**
 * The counts once they have not changed for `quietMs` (sockets of earlier tests may still be
 * closing), for a baseline to compare against later.
 */
export async function quietResources(quietMs = 150, deadlineMs = 3_000): Promise<ResourceCounts> {
  const deadline = performance.now() + deadlineMs;
  let last = countResources();
  let since = performance.now();
  while (performance.now() - since < quietMs && performance.now() < deadline) {
    await sleep(10);
    const now = countResources();
    if (!sameCounts(now, last)) [last, since] = [now, performance.now()];
  }
  return last;
}

/**
 * Polls until the counts are back to `baseline` (closing sockets and clearing timers can take a
 * few turns of the event loop) and resolves the last counts; after `deadlineMs` resolves the
 * counts as they are, so the caller's equality assertion fails and names what stayed open.
 */
export async function settleResources(baseline: ResourceCounts, deadlineMs = 3_000): Promise<ResourceCounts> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const now = countResources();
    if (sameCounts(now, baseline) || performance.now() > deadline) return now;
    await sleep(10);
  }
}

function sameCounts(a: ResourceCounts, b: ResourceCounts): boolean {
  return WATCHED.every((type) => a[type] === b[type]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
