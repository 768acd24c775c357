/** One holder's critical section on one key, as the parent saw it. */
interface Section {
  readonly pid: number;
  readonly key: string;
  readonly fence: number;
  /** Wall-clock end of the holder's lease, by its own engine (moved by renewals). */
  expiresAt: number;
  open: boolean;
}

/** A holder whose lease has less than this left when another gets the key is not counted: clocks and IPC differ by a few ms. */
const LEASE_MARGIN_MS = 100;

/** What went wrong (or not) between two snapshots. */
export interface LedgerCounts {
  readonly acquisitions: number;
  readonly writes: number;
  /** Sections begun while another holder of the same key still had a valid lease by its own clock. */
  readonly secondHolders: number;
  /** Writes not based on the counter's current value (the resource checks no fence, like most). */
  readonly lostUpdates: number;
  /** Acquisitions whose fence was not above every fence handed out for the key before. */
  readonly fenceRegressions: number;
  /** Writes a resource that checks fences would have refused (a higher fence was seen before). */
  readonly staleWrites: number;
}

/**
 * The resources the failover harness protects: one counter per key, each updated by a non-atomic
 * read-modify-write over IPC, plus the fences and lease deadlines of every holder, so that a second
 * holder, a lost update or a fence that went back is counted where it happened.
 */
export class FailoverLedger {
  private readonly counters = new Map<string, number>();
  private readonly maxFence = new Map<string, number>();
  private readonly sections: Section[] = [];
  private readonly totals = {
    acquisitions: 0,
    writes: 0,
    secondHolders: 0,
    lostUpdates: 0,
    fenceRegressions: 0,
    staleWrites: 0,
  };
  /** performance.now() of every acquisition (section begun), in order (the same index as `sections`). */
  readonly acquiredAt: number[] = [];

  begin(pid: number, key: string, fence: number, expiresAt: number): number {
    const now = Date.now();
    if (this.sections.some((s) => s.open && s.key === key && s.expiresAt > now + LEASE_MARGIN_MS))
      this.totals.secondHolders++;
    if (fence <= (this.maxFence.get(key) ?? -Infinity)) this.totals.fenceRegressions++;
    this.maxFence.set(key, Math.max(fence, this.maxFence.get(key) ?? -Infinity));
    this.totals.acquisitions++;
    this.acquiredAt.push(performance.now());
    this.sections.push({ pid, key, fence, expiresAt, open: true });
    return this.sections.length - 1;
  }

  extended(key: string, fence: number, expiresAt: number): void {
    for (const s of this.sections) if (s.open && s.key === key && s.fence === fence) s.expiresAt = expiresAt;
  }

  read(section: number): number {
    return this.counters.get(this.sections[section].key) ?? 0;
  }

  write(section: number, value: number): void {
    const { key, fence } = this.sections[section];
    if (value !== (this.counters.get(key) ?? 0) + 1) this.totals.lostUpdates++;
    if (fence < (this.maxFence.get(key) ?? -Infinity)) this.totals.staleWrites++;
    this.counters.set(key, value);
    this.totals.writes++;
  }

  end(section: number): void {
    this.sections[section].open = false;
  }

  /** A worker process exited: it holds nothing any more. */
  processGone(pid: number): void {
    for (const s of this.sections) if (s.pid === pid) s.open = false;
  }

  counts(): LedgerCounts {
    return { ...this.totals };
  }

  /** Sections begun before `before` (performance.now()) that are still open. */
  openSince(before: number): number {
    return this.sections.filter((s, i) => s.open && this.acquiredAt[i] <= before).length;
  }

  /** Acquisitions since `since` (performance.now()). */
  acquisitionsSince(since: number): number {
    return this.acquiredAt.filter((t) => t > since).length;
  }

  /** The longest time in [from, to] with no acquisition at all: how long the lock could not be taken. */
  longestGap(from: number, to: number): number {
    let last = from;
    let longest = 0;
    for (const t of this.acquiredAt) {
      if (t <= from) continue;
      if (t > to) break;
      longest = Math.max(longest, t - last);
      last = t;
    }
    return Math.max(longest, to - last);
  }
}

/** `after - before`, field by field. */
export function countsBetween(before: LedgerCounts, after: LedgerCounts): LedgerCounts {
  const diff = {} as Record<keyof LedgerCounts, number>;
  for (const name of Object.keys(after) as (keyof LedgerCounts)[]) diff[name] = after[name] - before[name];
  return diff;
}
