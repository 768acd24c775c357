/** One stretch of time during which an instance believed it led, on the machine's monotonic clock (ns). */
export interface Belief {
  readonly pid: number;
  readonly term: number;
  readonly start: bigint;
  end: bigint | undefined;
}

/**
 * What the leaders write to, kept by the test process: like a storage service checking fencing
 * tokens, it refuses a write whose term is below the highest it has accepted. It also records
 * every belief of leadership, to check that two instances never believed they led at once and that
 * no two leaderships had the same term.
 */
export class TermResource {
  accepted = 0;
  refused = 0;
  /** Accepted writes of one term from two different instances: two leaders with one term. */
  sameTermConflicts = 0;
  readonly refusedByPid = new Map<number, number>();
  readonly beliefs: Belief[] = [];
  private maxTerm = -Infinity;
  private writerOfMax: number | undefined;
  private readonly acceptedAt: bigint[] = [];

  write(pid: number, term: number): boolean {
    if (term < this.maxTerm) {
      this.refused++;
      this.refusedByPid.set(pid, (this.refusedByPid.get(pid) ?? 0) + 1);
      return false;
    }
    if (term === this.maxTerm && this.writerOfMax !== pid) this.sameTermConflicts++;
    this.maxTerm = term;
    this.writerOfMax = pid;
    this.accepted++;
    this.acceptedAt.push(process.hrtime.bigint());
    return true;
  }

  /** Writes accepted after `since` (hrtime ns). */
  acceptedSince(since: bigint): number {
    return this.acceptedAt.filter((at) => at > since).length;
  }

  began(pid: number, term: number, at: bigint): void {
    this.beliefs.push({ pid, term, start: at, end: undefined });
  }

  ended(pid: number, term: number, at: bigint): void {
    const belief = this.beliefs.find((each) => each.pid === pid && each.term === term && each.end === undefined);
    if (belief) belief.end = at;
  }

  /** The process is gone (killed): whatever it believed ends now. */
  gone(pid: number, at: bigint): void {
    for (const belief of this.beliefs) if (belief.pid === pid && belief.end === undefined) belief.end = at;
  }

  /** The open belief, if one instance believes it leads now. */
  current(): Belief | undefined {
    return this.beliefs.filter((belief) => belief.end === undefined).at(-1);
  }

  /** Pairs of beliefs of different instances that overlapped in time, leaving out the pids given (paused on purpose). */
  overlaps(except: ReadonlySet<number> = new Set()): number {
    const beliefs = this.beliefs
      .filter((belief) => !except.has(belief.pid))
      .sort((a, b) => (a.start < b.start ? -1 : 1));
    let count = 0;
    for (let i = 0; i < beliefs.length; i++) {
      for (
        let j = i + 1;
        j < beliefs.length && beliefs[j].start < (beliefs[i].end ?? BigInt(Number.MAX_SAFE_INTEGER) * 1000n);
        j++
      ) {
        if (beliefs[j].pid !== beliefs[i].pid) count++;
      }
    }
    return count;
  }

  /** Leaderships whose term was not larger than the term of the leadership that began before them. */
  nonIncreasingTerms(): number {
    const beliefs = [...this.beliefs].sort((a, b) => (a.start < b.start ? -1 : 1));
    return beliefs.filter((belief, i) => i > 0 && belief.term <= beliefs[i - 1].term).length;
  }
}
