import type { RedisClient } from './redis-client.js';

/** How often the watch looks at the oldest command awaiting its reply. */
const CHECK_EVERY_MS = 500;

/** The part of an ioredis `Redis` the watch reads: commands written to the socket, awaiting replies, oldest first. */
interface SentCommands {
  readonly commandQueue?: { peekFront?(): unknown };
}

/**
 * @internal Replaces the connection of a client the backend created once a command sent on it has
 * waited `stuckMs` (its command timeout) without an answer. A socket cut off by a partition is
 * otherwise kept, and after the heal TCP's retransmission back-off delays it by as long again as the
 * partition lasted (15-50 s after a 30 s one); a new connection answers as soon as the path is back.
 * Costs one timer per backend; nothing on the command path. Returns a function that stops the watch.
 */
export function watchStuckConnection(client: RedisClient, stuckMs: number, onReplaced: () => void): () => void {
  let oldest: unknown;
  let since = 0;
  const timer = setInterval(() => {
    const front = client.status === 'ready' ? sentCommands(client)?.peekFront() : undefined;
    const now = performance.now();
    if (front === undefined || front !== oldest) {
      oldest = front;
      since = now;
      return;
    }
    if (now - since < stuckMs) return;
    oldest = undefined;
    // disconnect(true): ioredis closes the socket and connects anew, resubscribing a subscriber.
    client.disconnect(true);
    onReplaced();
  }, CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** @internal ioredis's queue of the commands `client` sent that await their replies, or undefined if this ioredis version has none. */
export function sentCommands(client: RedisClient): { peekFront(): unknown } | undefined {
  const queue = (client as SentCommands).commandQueue;
  return typeof queue?.peekFront === 'function' ? (queue as { peekFront(): unknown }) : undefined;
}

/** The command timeout of an ioredis client (its `commandTimeout` option), or `fallbackMs`. */
export function commandTimeoutOf(client: RedisClient, fallbackMs: number): number {
  const value = (client.options as { commandTimeout?: unknown } | undefined)?.commandTimeout;
  return typeof value === 'number' && value > 0 ? value : fallbackMs;
}
