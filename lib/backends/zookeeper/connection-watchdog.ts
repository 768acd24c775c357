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
  private lastSocket: unknown;

  constructor(
    private readonly client: ZkClient,
    private readonly periodMs: number,
  ) {}

  /** Until `stop()`: breaks any connection attempt that is still pending after a whole period. */
  watchReconnect(): void {
    if (this.timer) return;
    this.lastSocket = undefined;
    this.timer = setInterval(() => {
      const socket = this.socket();
      if (socket && socket === this.lastSocket) this.kick();
      this.lastSocket = socket;
    }, this.periodMs);
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
