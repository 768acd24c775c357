import type { ZkClient } from './zk-driver.js';

interface DriverSocket {
  readonly bytesRead?: number;
  readonly remotePort?: number;
  destroy(): void;
}

/** The driver's internals this relies on; optional, so it does nothing if a driver version differs. */
interface DriverInternals {
  readonly connectionManager?: { readonly socket?: DriverSocket };
}

/**
 * node-zookeeper-client waits forever for the answer to its handshake (a server that accepts the
 * connection while still starting never sends one), and never notices a server that stopped
 * answering. Breaking its socket makes it reconnect, with the same session, possibly to another
 * ensemble member: what the Java client does on its connect and read timeouts.
 */
export class ConnectionWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private watching: 'reconnect' | 'connected' | undefined;

  constructor(
    private readonly client: ZkClient,
    /** How long one connection attempt (TCP connect and handshake) may take. */
    private readonly attemptTimeoutMs: number,
  ) {}

  /** Until `stop()` or `watchConnected()`: breaks any connection attempt still pending after `attemptTimeoutMs`. */
  watchReconnect(): void {
    if (this.watching === 'reconnect') return;
    this.watchSocket('reconnect', this.attemptTimeoutMs, () => undefined);
  }

  /**
   * Until `stop()` or `watchReconnect()`: breaks the connection when nothing was read from it for
   * `readTimeoutMs`. The driver pings when the connection idles for a third of the session timeout
   * and the server answers, so two thirds (the Java client's read timeout) means the server is gone.
   */
  watchConnected(readTimeoutMs: number): void {
    this.watchSocket('connected', readTimeoutMs, (socket) => socket?.bytesRead);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = this.watching = undefined;
  }

  /** Drops the current connection; the driver reconnects on its own. */
  kick(): void {
    try {
      this.socket()?.destroy();
    } catch {
      // Nothing to break.
    }
  }

  /** Kicks when the socket and what `progress` reads of it stay the same for `timeoutMs`. */
  private watchSocket(
    mode: 'reconnect' | 'connected',
    timeoutMs: number,
    progress: (socket: DriverSocket | undefined) => unknown,
  ): void {
    this.stop();
    this.watching = mode;
    let seen: unknown;
    let seenProgress: unknown;
    let seenAt = 0;
    this.timer = setInterval(
      () => {
        const socket = this.socket();
        const now = performance.now();
        if (socket !== seen || progress(socket) !== seenProgress) {
          [seen, seenProgress, seenAt] = [socket, progress(socket), now];
        } else if (socket && now - seenAt >= timeoutMs) {
          seenAt = now;
          this.kick();
        }
      },
      Math.max(25, timeoutMs / 20),
    );
    this.timer.unref();
  }

  private socket(): DriverSocket | undefined {
    return driverSocket(this.client);
  }
}

/** @internal The socket of the driver's current connection (none before `connect()`, or if this driver version keeps it elsewhere). */
export function driverSocket(client: ZkClient): DriverSocket | undefined {
  return (client as unknown as DriverInternals).connectionManager?.socket;
}
