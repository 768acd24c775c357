import type { ZkClient } from './zk-driver.js';

/** The driver's internals this relies on; optional, so it does nothing if a driver version differs. */
interface DriverInternals {
  readonly connectionManager?: { readonly socket?: { destroy(): void } };
}

/**
 * node-zookeeper-client waits forever for the answer to its handshake (a server that accepts the
 * connection while still starting never sends one), and never notices a server that stopped
 * answering. Breaking its socket makes it reconnect, with the same session, possibly to another
 * ensemble member: what the Java client does on its connect and read timeouts.
 */
export class ConnectionWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private socketSeen: unknown;
  private socketSeenAt = 0;

  constructor(
    private readonly client: ZkClient,
    /** How long one connection attempt (TCP connect and handshake) may take. */
    private readonly attemptTimeoutMs: number,
  ) {}

  /** Until `stop()`: breaks any connection attempt still pending after `attemptTimeoutMs`. */
  watchReconnect(): void {
    if (this.timer) return;
    this.socketSeen = undefined;
    this.timer = setInterval(() => {
      const socket = this.socket();
      if (socket !== this.socketSeen) {
        this.socketSeen = socket;
        this.socketSeenAt = performance.now();
      } else if (socket && performance.now() - this.socketSeenAt >= this.attemptTimeoutMs) {
        this.kick();
      }
    }, Math.max(25, this.attemptTimeoutMs / 5));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Drops the current connection; the driver reconnects on its own. */
  kick(): void {
    try {
      (this.socket() as { destroy(): void } | undefined)?.destroy();
    } catch {
      // Nothing to break.
    }
  }

  private socket(): unknown {
    return (this.client as unknown as DriverInternals).connectionManager?.socket;
  }
}
