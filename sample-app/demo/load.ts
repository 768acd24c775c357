/** Fires `requests` POSTs at the given instances (round-robin), `concurrency` at a time, and tallies the answers. */
export interface LoadResult {
  readonly requests: number;
  readonly sold: number;
  readonly soldOut: number;
  readonly conflicts: number;
  readonly errors: number;
  readonly latenciesMs: number[];
  readonly elapsedMs: number;
}

export async function fireSales(
  urls: string[],
  path: string,
  requests: number,
  concurrency: number,
): Promise<LoadResult> {
  let next = 0;
  let sold = 0;
  let soldOut = 0;
  let conflicts = 0;
  let errors = 0;
  const latenciesMs: number[] = [];
  const started = performance.now();
  const worker = async () => {
    while (next < requests) {
      const url = urls[next++ % urls.length];
      const t0 = performance.now();
      try {
        const response = await fetch(url + path, { method: 'POST' });
        const body = (await response.json().catch(() => ({}))) as { sold?: boolean };
        if (response.status === 200) body.sold ? sold++ : soldOut++;
        else if (response.status === 409) conflicts++;
        else errors++;
      } catch {
        errors++;
      }
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, sold, soldOut, conflicts, errors, latenciesMs, elapsedMs: performance.now() - started };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
