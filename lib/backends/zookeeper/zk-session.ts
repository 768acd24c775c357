import { setMaxListeners } from 'node:events';
import { LockBackendError } from '../../errors.js';
import { unrefTimer } from '../../util/clock.js';
import { ConnectionWatchdog, driverSocket } from './connection-watchdog.js';
import { guardReplyStream } from './reply-stream-guard.js';
import { AUTH_FAILED_MESSAGE } from './zk-access-error.js';
import { driverAcl } from './zk-acl.js';
import {
  ZK_ERROR,
  zkErrorCode,
  type ZkAcl,
  type ZkClient,
  type ZkDriver,
  type ZkStat,
  type ZkState,
  type ZkWatcher,
} from './zk-driver.js';

import type { ResolvedZookeeperOptions } from './zookeeper-options.js';

const EMPTY: Buffer = Buffer.alloc(0);

const BACKEND = 'zookeeper';
const CLOSE_WAIT_MS = 2_000;

/** A request the server did not answer in time; the connection was dropped, so the session reconnects (maybe to another member). */
export class ZkUnanswered extends LockBackendError {
  constructor(message: string) {
    super(BACKEND, message);
  }
}

/**
 * One ZooKeeper session: a node-zookeeper-client connection and the ephemeral nodes it owns.
 * `ended` aborts when the session expired or was closed: its ephemeral nodes are gone then.
 * Every operation is bounded by `connectTimeoutMs` (the driver itself waits forever for a server).
 * Every node it creates gets the `acl` option's ACL; the `auth` credentials go with every connection.
 */
export class ZkSession {
  private readonly client: ZkClient;
  private readonly acl: readonly ZkAcl[];
  private readonly endController = new AbortController();
  private connected = false;
  private authRejected = false;
  private readonly watchdog: ConnectionWatchdog;
  private readonly connectWaiters = new Set<() => void>();
  /** Clean-ups that failed for lack of a connection; retried on every reconnect of this session. */
  private readonly pendingCleanups = new Set<() => Promise<void>>();

  constructor(
    private readonly driver: ZkDriver,
    private readonly options: ResolvedZookeeperOptions,
  ) {
    // Every lock held in this session listens for its end.
    setMaxListeners(0, this.endController.signal);
    this.acl = driverAcl(driver, options.acl);
    this.client = driver.createClient(options.connectionString, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    // Before connect(): the client sends them right after each handshake, ahead of any request.
    for (const { scheme, credentials } of options.auth) this.client.addAuthInfo(scheme, credentials);
    this.client.on('state', (state) => this.onState(state));
    guardReplyStream(this.client);
    // Time for one attempt to connect: enough to try two members within connectTimeoutMs.
    this.watchdog = new ConnectionWatchdog(
      this.client,
      Math.max(250, Math.min(options.connectTimeoutMs / 2, options.sessionTimeoutMs / 3)),
    );
    this.watchdog.watchReconnect();
    this.client.connect();
  }

  get isConnected(): boolean {
    return this.connected;
  }

  get ended(): AbortSignal {
    return this.endController.signal;
  }

  /** The server rejected the `auth` option: a configuration error, not worth a new session at once. */
  get authFailed(): boolean {
    return this.authRejected;
  }

  /** The timeout the server granted (it clamps the requested one to 2..20 ticks). */
  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** The client port of the member this session is connected to (undefined while it is not). */
  get serverPort(): number | undefined {
    return this.connected ? driverSocket(this.client)?.remotePort : undefined;
  }

  /** The session's id and password (what a client needs to take the session over). */
  get credentials(): { readonly sessionId: Buffer; readonly sessionPassword: Buffer } {
    return { sessionId: this.client.getSessionId(), sessionPassword: this.client.getSessionPassword() };
  }

  /** Resolves once connected; rejects with LockBackendError after `connectTimeoutMs` or when the session ends. */
  whenConnected(): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.connectWaiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        if (this.ended.aborted)
          done(new LockBackendError(BACKEND, `the ZooKeeper session ended: ${String(this.ended.reason)}`));
        else if (this.connected) done();
      };
      const timer = unrefTimer(() => done(this.unreachable()), this.options.connectTimeoutMs);
      this.connectWaiters.add(check);
      check();
    });
  }

  /**
   * Creates an EPHEMERAL_SEQUENTIAL node; resolves its path. Not bounded: the caller bounds its
   * wait but keeps the outcome, since a create whose answer came late may still have landed.
   */
  createEphemeralSequential(path: string, data: Buffer = EMPTY): Promise<string> {
    const mode = this.driver.CreateMode.EPHEMERAL_SEQUENTIAL;
    return new Promise((resolve, reject) =>
      this.client.create(path, data, this.acl, mode, (error, created) => (error ? reject(error) : resolve(created))),
    );
  }

  /** Creates a missing lock parent and the claim's node under it in one multi; resolves the node's path. Not bounded, as above. */
  createWithParent(parentPath: string, childPath: string, data: Buffer = EMPTY): Promise<string> {
    const { PERSISTENT, EPHEMERAL_SEQUENTIAL } = this.driver.CreateMode;
    const multi = this.client
      .transaction()
      .create(parentPath, EMPTY, this.acl, PERSISTENT)
      .create(childPath, data, this.acl, EPHEMERAL_SEQUENTIAL);
    return new Promise((resolve, reject) =>
      multi.commit((error, results) => {
        const created = results?.[1]?.path;
        if (error || !created)
          reject(error ?? new LockBackendError(BACKEND, `the multi creating ${childPath} returned no path`));
        else resolve(created);
      }),
    );
  }

  /** Sends a delete at once if connected (before a close that follows, which the server then handles after it); ignores the outcome. */
  removeBeforeClose(path: string): void {
    if (this.connected) this.client.remove(path, -1, () => undefined);
  }

  mkdirp(path: string): Promise<void> {
    return this.bounded(`mkdirp ${path}`, (callback) =>
      this.client.mkdirp(path, this.acl, (error) => callback(error, undefined)),
    );
  }

  remove(path: string): Promise<void> {
    return this.bounded(`delete ${path}`, (callback) =>
      this.client.remove(path, -1, (error) => callback(error, undefined)),
    );
  }

  children(path: string): Promise<string[]> {
    return this.bounded(`getChildren ${path}`, (callback) => this.client.getChildren(path, callback));
  }

  /**
   * The node's stat, leaving `watcher` on it (fires once: deleted or data changed); `null` when
   * there is no such node, and then no watch is left behind (getData, unlike exists, sets none).
   */
  async watchNode(path: string, watcher: ZkWatcher): Promise<ZkStat | null> {
    try {
      return await this.bounded(`getData ${path}`, (callback) =>
        this.client.getData(path, watcher, (error, _data, stat) => callback(error, stat)),
      );
    } catch (error) {
      if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return null;
      throw error;
    }
  }

  /** The node's data and stat, without a watch; `null` when there is no such node. */
  async read(path: string): Promise<{ readonly data: Buffer; readonly stat: ZkStat } | null> {
    try {
      return await this.bounded(`getData ${path}`, (callback) =>
        this.client.getData(path, undefined, (error, data, stat) => callback(error, { data, stat })),
      );
    } catch (error) {
      if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return null;
      throw error;
    }
  }

  /** Whether `path` exists, confirmed through the leader (a multi with one check op is a write request). */
  async check(path: string): Promise<boolean> {
    try {
      await this.bounded(`check ${path}`, (callback) => this.client.transaction().check(path, -1).commit(callback));
      return true;
    } catch (error) {
      if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return false;
      throw error;
    }
  }

  /** Runs a best-effort clean-up now, and again after each reconnect until it succeeds (unless the session ends). */
  cleanUp(task: () => Promise<void>): void {
    task().catch(() => {
      if (!this.ended.aborted) this.pendingCleanups.add(task);
    });
  }

  /** Closes the session: the server deletes its ephemeral nodes. Resolves when the connection is gone (or after 2 s). */
  async close(): Promise<void> {
    if (this.ended.aborted) return;
    const disconnected = new Promise<void>((resolve) => {
      const timer = unrefTimer(resolve, CLOSE_WAIT_MS);
      this.client.on('state', (state) => {
        if (state.code === this.driver.State.DISCONNECTED.code) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const wasConnected = this.connected;
    this.end('the backend was closed');
    this.client.close();
    if (wasConnected) await disconnected;
  }

  private async bounded<T>(
    what: string,
    run: (callback: (error: Error | null, result: T) => void) => void,
  ): Promise<T> {
    await this.whenConnected();
    const answer = new Promise<T>((resolve, reject) =>
      run((error, result) => (error ? reject(error) : resolve(result))),
    );
    return this.withinTimeout(answer, what);
  }

  /** `promise`, or a LockBackendError once `connectTimeoutMs` passed without an answer. */
  withinTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const ms = this.options.connectTimeoutMs;
      const timer = unrefTimer(() => {
        // A server that stops answering keeps the connection open: reconnect, maybe to another member.
        if (this.connected) this.watchdog.kick();
        reject(new ZkUnanswered(`ZooKeeper did not answer ${what} within ${ms} ms`));
      }, ms);
      promise.then(
        (value) => (clearTimeout(timer), resolve(value)),
        (error: unknown) => (clearTimeout(timer), reject(error)),
      );
    });
  }

  private onState(state: ZkState): void {
    const { State } = this.driver;
    if (state.code === State.SYNC_CONNECTED.code) {
      this.connected = true;
      this.watchdog.watchConnected((this.timeoutMs * 2) / 3);
      for (const task of [...this.pendingCleanups]) {
        this.pendingCleanups.delete(task);
        this.cleanUp(task);
      }
    } else if (state.code === State.DISCONNECTED.code) {
      this.connected = false;
      if (!this.ended.aborted) this.watchdog.watchReconnect();
    } else if (state.code === State.EXPIRED.code || state.code === State.AUTH_FAILED.code) {
      this.authRejected = state.code === State.AUTH_FAILED.code;
      this.end(this.authRejected ? AUTH_FAILED_MESSAGE : 'the ZooKeeper session expired');
      this.client.close();
    }
    for (const check of [...this.connectWaiters]) check();
  }

  private end(reason: string): void {
    if (this.ended.aborted) return;
    this.connected = false;
    this.watchdog.stop();
    this.pendingCleanups.clear();
    this.endController.abort(reason);
    for (const check of [...this.connectWaiters]) check();
  }

  private unreachable(): LockBackendError {
    return new LockBackendError(
      BACKEND,
      `could not connect to ZooKeeper at ${this.options.connectionString} within ${this.options.connectTimeoutMs} ms`,
    );
  }
}
