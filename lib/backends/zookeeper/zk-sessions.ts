import { LockBackendError } from '../../errors.js';
import { ParentJanitor } from './parent-janitor.js';
import type { ZkDriver } from './zk-driver.js';
import { ZkSession } from './zk-session.js';
import type { ResolvedZookeeperOptions } from './zookeeper-options.js';

/**
 * The backend's one live session, shared by all its locks. Opened on first use; after an expiry
 * the next call opens a new one (locks held in the old one are lost, see ZookeeperClaim).
 */
export class ZkSessions {
  private current: ZkSession | undefined;
  private everConnected = new WeakSet<ZkSession>();
  private closed = false;
  /** Whether the parents left by dead instances were handed to the janitor (once, at the first session). */
  private orphansAdopted = false;
  /** Deletes the parents of released keys once they stay empty. */
  readonly janitor: ParentJanitor;

  constructor(
    private readonly driver: ZkDriver,
    readonly options: ResolvedZookeeperOptions,
  ) {
    this.janitor = new ParentJanitor(
      () => (this.current?.ended.aborted ? undefined : this.current),
      options.parentCleanupDelayMs,
    );
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * The live, connected session. A session that expires while this waits for it is replaced by a
   * new one at once. Rejects with LockBackendError when none can be had within `connectTimeoutMs`.
   */
  async get(): Promise<ZkSession> {
    for (;;) {
      if (this.closed) throw new LockBackendError('zookeeper', 'the backend is closed');
      if (!this.current || this.current.ended.aborted) this.current = new ZkSession(this.driver, this.options);
      const session = this.current;
      try {
        await session.whenConnected();
      } catch (error) {
        // An expired session (it was connected once) is no outage: its successor is tried next. Rejected
        // credentials would be rejected again: the caller hears of it (the next call tries a new session).
        if (this.everConnected.has(session) && session.ended.aborted && !session.authFailed && !this.closed) continue;
        // A session that never got through is dropped, so the next call starts afresh; one that was
        // connected keeps reconnecting on its own while the server still holds it.
        if (this.current === session && !this.everConnected.has(session)) {
          this.current = undefined;
          void session.close();
        }
        throw error;
      }
      if (!this.orphansAdopted) {
        this.orphansAdopted = true;
        void this.janitor.adoptOrphans(session, this.options.rootPath);
      }
      this.everConnected.add(session);
      if (this.closed) throw new LockBackendError('zookeeper', 'the backend is closed');
      return session;
    }
  }

  /** @internal The live session, if any (for tests). */
  peek(): ZkSession | undefined {
    return this.current;
  }

  /** Closes the session: the server deletes every ephemeral node it owns. */
  async close(): Promise<void> {
    this.closed = true;
    this.janitor.flush();
    const session = this.current;
    this.current = undefined;
    await session?.close();
  }
}
