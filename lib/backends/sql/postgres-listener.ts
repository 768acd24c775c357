import { monotonicNow } from '../../util/clock.js';
import { OVERDUE, withinMs } from '../../util/time-limit.js';
import type { ReleaseNotifier } from './sql-dialect.js';
import { breakPgConnection, type PgClient } from './postgres-driver.js';
import { endOrBreak } from './connection-end.js';

/** After the listening connection failed, wait this long before connecting again (waiters poll meanwhile). */
const RECONNECT_DELAY_MS = 1_000;

/** While claims wait, a listening connection that brought nothing for this long is asked a `SELECT 1`. */
const CHECK_EVERY_MS = 1_000;

/** A listening connection that does not answer its check within this long is replaced. */
const CHECK_TIMEOUT_MS = 1_500;

/**
 * One dedicated connection per backend that LISTENs on the table's release channel and wakes a
 * waiter of the released key. Connected lazily by the first waiter, reconnected lazily after a
 * failure; while it is down, waiters fall back to polling. Owned and closed by the backend.
 */
export class PostgresReleaseListener implements ReleaseNotifier {
  private readonly subscribers = new Map<string, Set<() => void>>();
  private client: PgClient | undefined;
  private connecting: Promise<void> | undefined;
  private listening = false;
  private closed = false;
  private retryAt = 0;
  /** When the listening connection last brought something (monotonic ms). */
  private heardAt = 0;
  private checks: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly createClient: () => PgClient,
    private readonly channel: string,
  ) {}

  subscribe(keyHash: string, wake: () => void): (passOn: boolean) => void {
    let wakers = this.subscribers.get(keyHash);
    if (!wakers) this.subscribers.set(keyHash, (wakers = new Set()));
    wakers.add(wake);
    this.isListening();
    return (passOn) => {
      wakers.delete(wake);
      if (wakers.size === 0 && this.subscribers.get(keyHash) === wakers) this.subscribers.delete(keyHash);
      if (passOn) this.wakeOne(keyHash);
    };
  }

  isListening(): boolean {
    if (!this.listening && !this.connecting && !this.closed && monotonicNow() >= this.retryAt) {
      this.connecting = this.connect().finally(() => (this.connecting = undefined));
    }
    return this.listening;
  }

  /** Ends the listening connection, also one still connecting (bounded by its connect timeout). */
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearInterval(this.checks);
    this.checks = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) await endOrBreak(client.end(), () => breakPgConnection(client));
  }

  /** Never rejects: a failure only means waiters keep polling. */
  private async connect(): Promise<void> {
    let client: PgClient;
    try {
      client = this.createClient();
    } catch {
      this.retryAt = monotonicNow() + RECONNECT_DELAY_MS;
      return;
    }
    this.client = client;
    client.on('notification', (message) => {
      this.heardAt = monotonicNow();
      if (message.channel === this.channel && message.payload) this.wakeOne(message.payload);
    });
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
      if (this.client !== client) return; // closed meanwhile
      await client.query(`LISTEN "${this.channel}"`);
      if (this.client !== client) return;
      this.listening = true;
      this.heardAt = monotonicNow();
      this.checks ??= setInterval(this.check, CHECK_EVERY_MS).unref();
    } catch {
      this.drop(client);
    }
  }

  /**
   * A connection cut off for a while can look alive and bring nothing: the server's notifications
   * wait in its TCP retransmission back-off (14 s after a 30 s partition, measured), while waiters
   * rely on them and notified clients of other processes take every turn. While claims wait, a
   * connection silent for a while answers a `SELECT 1` in time, or is replaced. Never throws.
   */
  private readonly check = (): void => {
    const client = this.client;
    if (!client || !this.listening || this.checking || this.subscribers.size === 0) return;
    if (monotonicNow() - this.heardAt < CHECK_EVERY_MS) return;
    this.checking = true;
    withinMs(client.query('SELECT 1'), CHECK_TIMEOUT_MS, { keepAlive: false })
      .then(
        () => {
          this.heardAt = monotonicNow();
        },
        (error: unknown) => {
          if (error === OVERDUE) this.replace(client);
        },
      )
      .finally(() => {
        this.checking = false;
      });
  };

  /** Gives up a connection that stopped answering: its socket is destroyed, waiters poll, a new one connects. */
  private replace(client: PgClient): void {
    if (this.client !== client) return;
    try {
      breakPgConnection(client);
    } catch {
      // Nothing more to do for a connection that is going anyway.
    }
    this.drop(client);
  }

  /** The connection is gone: wake everyone (they re-check and poll) and reconnect later. */
  private drop(client: PgClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    this.checking = false;
    this.retryAt = monotonicNow() + RECONNECT_DELAY_MS;
    client.end().catch(() => undefined);
    for (const wakers of this.subscribers.values()) for (const wake of wakers) wake();
  }

  /** Wakes the longest-waiting waiter of the key: one attempt per release per process, not a herd. */
  private wakeOne(keyHash: string): void {
    const first = this.subscribers.get(keyHash)?.values().next();
    if (first && !first.done) first.value();
  }
}
