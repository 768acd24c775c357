/** One holder's critical section, as the resource saw it (sequence numbers of the resource's own clock). */
interface Section {
  readonly pid: number;
  readonly fence: number | undefined;
  readonly begunAt: number;
  endedAt: number;
  wrote: boolean;
}

/**
 * The shared thing the locks protect: a counter with a non-atomic read-modify-write, kept in the
 * test process and reached by the workers over IPC. Like a storage service that checks fencing
 * tokens (Kleppmann), it refuses any request from a holder whose fence is below the highest it
 * has seen. It counts lost updates (a write not based on the current value) and overlaps (two
 * sections that both wrote and were open at the same time).
 */
export class FencedResource {
  value = 0;
  writes = 0;
  lostUpdates = 0;
  refused = 0;
  private maxFence = -Infinity;
  private seq = 0;
  private readonly sections: Section[] = [];
  private readonly writeTimes: number[] = [];

  begin(pid: number, fence: number | undefined): number | undefined {
    if (fence !== undefined) {
      if (fence < this.maxFence) return void this.refused++;
      this.maxFence = fence;
    }
    this.sections.push({ pid, fence, begunAt: ++this.seq, endedAt: Infinity, wrote: false });
    return this.sections.length - 1;
  }

  read(): number {
    return this.value;
  }

  write(section: number, value: number): boolean {
    const s = this.sections[section];
    if (s.fence !== undefined && s.fence < this.maxFence) {
      this.refused++;
      return false;
    }
    if (value !== this.value + 1) this.lostUpdates++;
    this.value = value;
    this.writes++;
    s.wrote = true;
    this.writeTimes.push(performance.now());
    return true;
  }

  end(section: number): void {
    const s = this.sections[section];
    if (s.endedAt === Infinity) s.endedAt = ++this.seq;
  }

  /** A process died: nothing it had open can act any more. */
  processGone(pid: number): void {
    for (let i = 0; i < this.sections.length; i++) if (this.sections[i].pid === pid) this.end(i);
  }

  /** When the first write after `since` was accepted (performance.now()), if any. */
  firstWriteAfter(since: number): number | undefined {
    return this.writeTimes.find((t) => t > since);
  }

  /** Writes accepted after `since` (performance.now()): progress after a fault. */
  writesSince(since: number): number {
    return this.writeTimes.filter((t) => t > since).length;
  }

  /** Sections that wrote while another section that also wrote was open. */
  overlaps(): number {
    const wrote = this.sections.filter((s) => s.wrote).sort((a, b) => a.begunAt - b.begunAt);
    let count = 0;
    let openUntil = -Infinity;
    for (const s of wrote) {
      if (s.begunAt < openUntil) count++;
      openUntil = Math.max(openUntil, s.endedAt);
    }
    return count;
  }
}
