import { randomBytes } from 'node:crypto';
import { LockBackendError } from '../../errors.js';
import { monotonicNow, sleep } from '../../util/clock.js';
import { isShared } from '../../engine/lock-mode.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { queuePosition } from './lock-queue.js';
import { createLockNode, removeIfPresent } from './lock-nodes.js';
import { explainAccessError } from './zk-access-error.js';
import { NODE_DELETED, ZK_ERROR, zkErrorCode, type ZkStat, type ZkWatchEvent, type ZkWatcher } from './zk-driver.js';
import { lockNodePrefix, lockParentPath } from './zk-paths.js';
import { ZkUnanswered, type ZkSession } from './zk-session.js';
import type { ZkSessions } from './zk-sessions.js';

/** A waiter re-reads the queue at least this often even without a watch event (a safety net, not the mechanism). */
const FALLBACK_RECHECK_MS = 30_000;
/** Rounds of "create, then find it among the children" before giving up on a node that keeps vanishing. */
const MAX_ROUNDS = 4;

interface OwnNode {
  readonly session: ZkSession;
  readonly path: string;
  readonly name: string;
  /** One watcher function per node, so that the driver registers it once however often it is set. */
  readonly watcher: ZkWatcher;
}

interface PredecessorWatch {
  readonly session: ZkSession;
  readonly path: string;
  readonly changed: Promise<void>;
}

/**
 * One acquisition on ZooKeeper: an EPHEMERAL_SEQUENTIAL node `<mode>-<attemptId>-<seq>` under the
 * key's parent node, kept from the first attempt until released. Lowest (or no writer ahead, for a
 * reader) holds the lock; a waiter watches only the one node it waits for. The attempt id in the
 * name finds a node again whose create answer was lost, so it never stays behind as an orphan.
 */
export class ZookeeperClaim implements LockClaim {
  private readonly parentPath: string;
  private readonly shared: boolean;
  private attemptId = newAttemptId();
  private node: OwnNode | undefined;
  /** Settles when a create sent for this claim got its answer (or was given up on). */
  private pendingCreate: Promise<void> | undefined;
  /** A session in which a create of the current attempt may have landed without us seeing the answer. */
  private unconfirmed: ZkSession | undefined;
  private predecessor: { readonly session: ZkSession; readonly path: string } | undefined;
  private watch: PredecessorWatch | undefined;
  private held = false;
  private stopWatchingSession: (() => void) | undefined;

  constructor(
    private readonly sessions: ZkSessions,
    private readonly request: ClaimRequest,
  ) {
    this.parentPath = lockParentPath(sessions.options.rootPath, request.key);
    this.shared = isShared(request.mode);
  }

  async tryAcquire(): Promise<AttemptResult> {
    const { connectTimeoutMs } = this.sessions.options;
    let deadline = monotonicNow() + connectTimeoutMs;
    let extended = false;
    for (;;) {
      const session = await this.sessions.get();
      try {
        const result = await this.attempt(session);
        // Closed meanwhile: the session's nodes go with it, so this is no lock to hand out.
        if (result.acquired && this.sessions.isClosed) throw new LockBackendError('zookeeper', 'the backend is closed');
        return result;
      } catch (error) {
        // A dropped connection (the client reconnects, e.g. to another ensemble member, also after a
        // request went unanswered) or an expired session (the next one is opened at once) is not the
        // store being down: try again, finding a node whose create answer was lost by its attempt id.
        const retry =
          !session.authFailed && (isConnectionDrop(error) || (session.ended.aborted && !this.sessions.isClosed));
        // A member found silent only at the end of the time: once, another connectTimeoutMs on the next connection.
        if (retry && monotonicNow() >= deadline && !extended)
          [deadline, extended] = [monotonicNow() + connectTimeoutMs, true];
        if (!retry || monotonicNow() >= deadline)
          throw explainAccessError(error, session, `a lock node under ${this.parentPath}`);
      }
    }
  }

  private async attempt(session: ZkSession): Promise<AttemptResult> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const node = await this.ensureNode(session);
      // Both reads in one round trip. The watch on our own node tells a holder at once when it is deleted behind its back.
      const [children, stat] = await Promise.all([
        this.childrenOrNone(session),
        session.watchNode(node.path, node.watcher),
      ]);
      const position = queuePosition(children, node.name, this.shared);
      if (position.state === 'waiting') {
        this.predecessor = { session, path: `${this.parentPath}/${position.watch}` };
        return { acquired: false };
      }
      if (position.state === 'held' && stat) {
        this.hold(node);
        return { acquired: true, fence: fenceOf(stat), validityMs: validityOf(this.request.leaseMs, session) };
      }
      if (this.node === node) this.node = undefined; // it vanished: queue again
    }
    throw new LockBackendError('zookeeper', `the lock node under ${this.parentPath} kept vanishing`);
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    const target = this.predecessor;
    if (!target || target.session.ended.aborted || signal.aborted) return;
    let changed: Promise<void>;
    try {
      ({ changed } = await this.watchPredecessor(target.session, target.path));
    } catch {
      return; // the next tryAcquire reports the store's trouble
    }
    const stop = AbortSignal.any([signal, target.session.ended]);
    const woken = new AbortController();
    void changed.then(() => woken.abort());
    await sleep(Math.min(maxMs, FALLBACK_RECHECK_MS), AbortSignal.any([stop, woken.signal]));
  }

  /** The lock lives as long as the session: renewal confirms (through the leader) that the node is still there. */
  async renew(leaseMs: number): Promise<number | false> {
    const node = this.node;
    if (!this.held || !node || node.session.ended.aborted) return false;
    if (!(await node.session.check(node.path))) return false;
    return this.held && this.node === node ? validityOf(leaseMs, node.session) : false;
  }

  async release(): Promise<boolean> {
    const wasHeld = this.held;
    const node = this.node;
    const unconfirmed = this.unconfirmed;
    const prefix = this.prefix();
    this.held = false;
    this.stopWatchingSession?.();
    this.node = this.unconfirmed = this.predecessor = this.watch = undefined;
    // A create still on its way now lands as a stranger's and is deleted on arrival (see adopt).
    this.attemptId = newAttemptId();
    if (unconfirmed && !unconfirmed.ended.aborted) unconfirmed.cleanUp(() => this.removeByPrefix(unconfirmed, prefix));
    if (!node || node.session.ended.aborted) return !wasHeld;
    let existed: boolean;
    try {
      existed = await this.removeNode(node);
    } catch (error) {
      node.session.cleanUp(() => removeIfPresent(node.session, node.path));
      throw error;
    }
    this.sessions.janitor.schedule(this.parentPath);
    return existed || !wasHeld;
  }

  /**
   * Deletes the claim's node; whether it was there. A connection that dropped before the answer (the
   * session reconnects, maybe to another member) gets the delete once more; gone by then, it was ours.
   */
  private async removeNode(node: OwnNode): Promise<boolean> {
    let answerLost = false;
    for (;;) {
      try {
        await node.session.remove(node.path);
        return true;
      } catch (error) {
        if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return answerLost;
        if (node.session.ended.aborted) return false;
        if (answerLost || !isConnectionDrop(error)) throw error;
        answerLost = true;
      }
    }
  }

  private async ensureNode(session: ZkSession): Promise<OwnNode> {
    if (this.pendingCreate)
      await session.withinTimeout(this.pendingCreate, `an earlier create under ${this.parentPath}`);
    if (this.node?.session === session) return this.node;
    this.node = undefined; // none yet, or it died with an earlier session
    if (this.unconfirmed === session) {
      const name = (await this.childrenOrNone(session)).find((child) => child.startsWith(this.prefix()));
      this.unconfirmed = undefined;
      if (name) return this.ownNode(session, `${this.parentPath}/${name}`);
    }
    const attemptId = this.attemptId;
    const answer = createLockNode(
      session,
      this.sessions.options.rootPath,
      this.parentPath,
      this.prefix(),
      Buffer.from(this.request.owner),
    ).then(
      (path) => this.adopt(session, attemptId, path),
      (error: unknown) => {
        // The request may have been applied even though its answer was lost.
        if (zkErrorCode(error) === ZK_ERROR.CONNECTION_LOSS && attemptId === this.attemptId) this.unconfirmed = session;
        throw error;
      },
    );
    const pending = answer.then(
      () => undefined,
      () => undefined,
    );
    this.pendingCreate = pending;
    void pending.then(() => {
      if (this.pendingCreate === pending) this.pendingCreate = undefined;
    });
    await session.withinTimeout(answer, `create under ${this.parentPath}`);
    const created = this.node as OwnNode | undefined; // set by adopt()
    if (created?.session !== session)
      throw new LockBackendError('zookeeper', 'the claim was released while its node was being created');
    return created;
  }

  /** Takes a created node as this claim's, or deletes it when the claim has moved on since it asked for it. */
  private adopt(session: ZkSession, attemptId: string, path: string): void {
    if (attemptId === this.attemptId && !session.ended.aborted) {
      this.ownNode(session, path);
    } else if (!session.ended.aborted) {
      session.cleanUp(() => removeIfPresent(session, path));
    }
  }

  private ownNode(session: ZkSession, path: string): OwnNode {
    const node: OwnNode = {
      session,
      path,
      name: path.slice(path.lastIndexOf('/') + 1),
      watcher: (event) => this.onOwnNodeEvent(node, event),
    };
    return (this.node = node);
  }

  private hold(node: OwnNode): void {
    this.held = true;
    const onEnded = () => this.lose('the ZooKeeper session ended (expired or closed); its lock nodes are gone');
    node.session.ended.addEventListener('abort', onEnded, { once: true });
    this.stopWatchingSession = () => node.session.ended.removeEventListener('abort', onEnded);
  }

  private onOwnNodeEvent(node: OwnNode, event: ZkWatchEvent): void {
    if (this.node !== node) return;
    if (event.getType() === NODE_DELETED) {
      this.lose('its lock node was deleted behind its back');
      return;
    }
    // Someone changed its data: keep watching.
    node.session.watchNode(node.path, node.watcher).then(
      (stat) => stat === null && this.lose('its lock node was deleted behind its back'),
      () => undefined,
    );
  }

  private lose(reason: string): void {
    if (!this.held) return;
    this.held = false;
    this.request.onLost(reason);
  }

  /** Sets (or reuses) the watch on the node this claim waits for; `changed` resolves when it fires. */
  private async watchPredecessor(session: ZkSession, path: string): Promise<{ changed: Promise<void> }> {
    const current = this.watch;
    if (current && current.session === session && current.path === path) return current;
    let notify!: () => void;
    const changed: Promise<void> = new Promise<void>((resolve) => {
      notify = () => {
        if (this.watch?.changed === changed) this.watch = undefined;
        resolve();
      };
    });
    const stat = await session.watchNode(path, () => notify());
    if (stat === null)
      notify(); // already gone: go and look again
    else this.watch = { session, path, changed };
    return { changed };
  }

  private async childrenOrNone(session: ZkSession): Promise<string[]> {
    try {
      return await session.children(this.parentPath);
    } catch (error) {
      if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return [];
      throw error;
    }
  }

  private async removeByPrefix(session: ZkSession, prefix: string): Promise<void> {
    const children = await this.childrenOrNone(session);
    await Promise.all(
      children
        .filter((child) => child.startsWith(prefix))
        .map((child) => removeIfPresent(session, `${this.parentPath}/${child}`)),
    );
  }

  private prefix(): string {
    return lockNodePrefix(this.request.mode, this.attemptId);
  }
}

/** The connection went (or was dropped after an unanswered request) before the answer came: the request may or may not have been applied. */
function isConnectionDrop(error: unknown): boolean {
  return error instanceof ZkUnanswered || zkErrorCode(error) === ZK_ERROR.CONNECTION_LOSS;
}

/** The lock node's creation zxid: strictly increasing over every node ever created in the ensemble. */
function fenceOf(stat: ZkStat): number {
  return Number(stat.czxid.readBigUInt64BE(0));
}

/**
 * How long the lock is surely held after the server answered: the session outlives it by at least
 * its timeout, and the caller's lease bounds how long the holder trusts it without hearing back.
 */
function validityOf(leaseMs: number, session: ZkSession): number {
  return Math.min(leaseMs, session.timeoutMs);
}

function newAttemptId(): string {
  return randomBytes(8).toString('hex');
}
