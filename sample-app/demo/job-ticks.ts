/** What the instances' restock job did while the demo watched it. */
export interface JobTicks {
  /** Ticks of the schedule within the watched time. */
  readonly ticks: number;
  readonly ranOnce: number;
  readonly ranMoreThanOnce: number;
  readonly missed: number;
  /** Per instance, of the same watched ticks: how many it ran, and at how many it stood aside. */
  readonly instances: readonly { instance: string; ran: number; skipped: number }[];
}

interface InstanceJobs {
  instance: string;
  ran: number[];
  skipped: number[];
}

/** Lets the instances' restock job run for `watchMs`, then counts, per tick of that time, how many instances ran it. */
export async function collectJobTicks(urls: readonly string[], watchMs: number, periodMs = 2_000): Promise<JobTicks> {
  const firstTick = Math.floor(Date.now() / periodMs) + 1;
  await new Promise((resolve) => setTimeout(resolve, watchMs));
  const lastTick = Math.floor(Date.now() / periodMs) - 1;
  const reports = await Promise.all(
    urls.map(async (url) => (await (await fetch(`${url}/jobs/restock`)).json()) as InstanceJobs),
  );
  // Only the watched ticks: the instances' jobs also ran before (during the flash sale) and after.
  const inWindow = (ticks: number[]) => ticks.filter((tick) => tick >= firstTick && tick <= lastTick);
  const runs = new Map<number, number>();
  for (const report of reports) for (const tick of inWindow(report.ran)) runs.set(tick, (runs.get(tick) ?? 0) + 1);
  const watched = Array.from({ length: Math.max(0, lastTick - firstTick + 1) }, (_, i) => runs.get(firstTick + i) ?? 0);
  return {
    ticks: watched.length,
    ranOnce: watched.filter((count) => count === 1).length,
    ranMoreThanOnce: watched.filter((count) => count > 1).length,
    missed: watched.filter((count) => count === 0).length,
    instances: reports.map((report) => ({
      instance: report.instance,
      ran: inWindow(report.ran).length,
      skipped: inWindow(report.skipped).length,
    })),
  };
}
