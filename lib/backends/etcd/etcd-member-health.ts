import { monotonicNow, unrefTimer } from '../../util/clock.js';

/** Pause between two health probes of a member that is down; the least time between two checks of one that is up. */
const PROBE_INTERVAL_MS = 100;
/** How long a probe may take: a member that serves quorum reads answers in milliseconds. */
const PROBE_DEADLINE_MS = 500;

/**
 * @internal
 * Asks one member alone whether it serves quorum requests now (a linearizable read, which needs a
 * leader: a member cut off from its peers, or one whose cluster is electing, does not answer it).
 * Rejects when it does not answer within `deadlineMs`.
 */
export type MemberProbe = (host: string, deadlineMs: number) => Promise<void>;

/** A gRPC stream, as far as this file needs it. */
interface OpenStream {
  cancel(): void;
  once(event: string, listener: () => void): unknown;
}

/**
 * @internal
 * The members of one etcd cluster as this client sees them. A member whose call went unanswered is
 * down: calls and streams go to the others, and it is probed in the background until it answers a
 * quorum read (so a member that is cut off costs calls nothing more until it is back, however long
 * that takes). While every member is down, calls wait for the first to answer a probe: after a
 * leader is lost, a call then lands on the new leader's cluster as soon as it has one.
 */
export class MemberHealth {
  private readonly members: MemberPolicy[] = [];
  private readonly upWaiters = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly isUnanswered: (error: unknown) => boolean,
    private readonly probe: MemberProbe,
  ) {}

  /** The policy of the member at `host` (etcd3 asks for one per member). */
  member(host: string): MemberPolicy {
    const member = new MemberPolicy(host, this);
    this.members.push(member);
    return member;
  }

  /** Whether every member is down (never with a single member: it has nowhere else to go). */
  get allDown(): boolean {
    return this.members.length > 1 && this.members.every((member) => member.down);
  }

  /** Resolves once a member is up again, or after `maxMs` (keeping the process alive: a caller waits). */
  waitForUp(maxMs: number): Promise<void> {
    if (this.closed || !this.allDown || maxMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.upWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      this.upWaiters.add(done);
    });
  }

  /**
   * A waiter's watch went silent for a whole share of the request timeout: either nothing changed,
   * or the member its stream is on hangs with its connection open (streams have no deadline, so
   * nothing else notices). Every member is probed (the stream the waiter opens next may land on any
   * of them): one that does not answer goes down, and its streams are reopened on another member.
   * Resolves once every probe answered or failed, so that the waiter's next look cannot land on a
   * member that hangs. Never rejects.
   */
  checkMembers(): Promise<void> {
    if (this.closed || this.members.length < 2) return Promise.resolve();
    return Promise.all(this.members.map((member) => member.check())).then(() => undefined);
  }

  /** Stops the probes. */
  close(): void {
    this.closed = true;
    for (const done of [...this.upWaiters]) done();
  }

  /** @internal Whether `member` should let this call through: it is up, or no member is preferable. */
  mayCall(member: MemberPolicy): boolean {
    return !member.down || !this.members.some((other) => other.preferredTo(member));
  }

  /** @internal Whether `error` takes a member down: it went unanswered, and there is another member to go to. */
  takesDown(error: unknown): boolean {
    return this.members.length > 1 && this.isUnanswered(error);
  }

  /** @internal A member answered again. */
  cameUp(): void {
    for (const done of [...this.upWaiters]) done();
  }

  /** @internal Probes `member` once: it answers (it is up), or `unanswered` is called. Never rejects. */
  probeOnce(member: MemberPolicy, unanswered: () => void): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.probe(member.host, PROBE_DEADLINE_MS).then(() => member.answered(), unanswered);
  }

  /** @internal Probes `member` until it answers (then it is up again), or until the client closes. */
  probeUntilUp(member: MemberPolicy): void {
    const next = () => {
      if (this.closed || !member.down) return;
      this.probe(member.host, PROBE_DEADLINE_MS).then(
        () => member.answered(),
        () => unrefTimer(next, PROBE_INTERVAL_MS),
      );
    };
    next();
  }
}

/**
 * @internal
 * One member's policy (etcd3's `faultHandling.host`): calls go through while the member is up; while
 * it is down, only when no other member is preferable (up, or down but answered more recently).
 */
export class MemberPolicy {
  down = false;
  /** When this member last answered a call or a probe (monotonic ms). */
  private answeredAt = 0;
  private readonly streams = new Set<OpenStream>();
  /** The probe of {@link check} on its way (one at a time), and when the last one was sent (monotonic ms). */
  private checking: Promise<void> | undefined;
  private checkedAt = -Infinity;

  constructor(
    readonly host: string,
    private readonly health: MemberHealth,
  ) {}

  /** Whether a call should rather go to this member than to `other`, which is down. */
  preferredTo(other: MemberPolicy): boolean {
    return this !== other && (!this.down || this.answeredAt > other.answeredAt);
  }

  async execute<T>(call: () => T): Promise<Awaited<T>> {
    if (!this.health.mayCall(this)) throw new MemberSkippedError();
    try {
      const result = await call();
      if (isStream(result)) this.track(result);
      else this.answered();
      return result;
    } catch (error) {
      if (this.health.takesDown(error)) this.goDown();
      throw error;
    }
  }

  /** The member answered: it is up. */
  answered(): void {
    this.answeredAt = monotonicNow();
    if (!this.down) return;
    this.down = false;
    this.health.cameUp();
  }

  /**
   * Probes this member once, if it is up: one that does not answer goes down. A probe on its way is
   * shared, and one sent less than {@link PROBE_INTERVAL_MS} ago that answered is not repeated, so
   * however many watches go silent, a member gets at most one probe per interval.
   */
  check(): Promise<void> {
    if (this.checking) return this.checking;
    const now = monotonicNow();
    if (this.down || now - this.checkedAt < PROBE_INTERVAL_MS) return Promise.resolve();
    this.checkedAt = now;
    this.checking = this.health
      .probeOnce(this, () => this.goDown())
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  /** Passes this member over, moves its streams (etcd3 opens them again through another member), and probes it until it answers. */
  private goDown(): void {
    for (const stream of [...this.streams]) {
      this.streams.delete(stream);
      stream.cancel();
    }
    if (this.down) return;
    this.down = true;
    this.health.probeUntilUp(this);
  }

  private track(stream: OpenStream): void {
    this.streams.add(stream);
    const forget = () => this.streams.delete(stream);
    stream.once('close', forget);
    stream.once('status', forget);
  }
}

function isStream(value: unknown): value is OpenStream {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<OpenStream>).cancel === 'function' &&
    typeof (value as Partial<OpenStream>).once === 'function'
  );
}

/** @internal Thrown without calling a member that is passed over: etcd3 then tries the next one. */
export class MemberSkippedError extends Error {
  constructor() {
    super('etcd member passed over: it is down');
  }
}
