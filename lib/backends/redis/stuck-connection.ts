import type { RedisClient } from './redis-client.js';

/** How often the watch looks at the oldest command awaiting its answer. */
const CHECK_EVERY_MS = 500;

/** An entry of ioredis' command queues: the command, whose promise its caller awaits. */
interface QueuedCommand {
  readonly command?: { reject?(error: Error): void };
}

/** One of ioredis' command queues (a Denque), oldest first. */
interface CommandQueue {
  peekFront(): unknown;
  toArray(): unknown[];
}

/**
 * The part of an ioredis `Redis` the watch reads: commands written to the socket awaiting their
 * answers; those of a closed connection, to be sent again once it is back; those queued while it connects.
 */
interface ClientQueues {
  readonly commandQueue?: CommandQueue;
  readonly prevCommandQueue?: CommandQueue | null;
  readonly offlineQueue?: CommandQueue;
}

/**
 * @internal Bounds the commands of a client the backend created, with one timer per backend and
 * nothing on the command path (ioredis' `commandTimeout` arms and clears a timer per command). Once
 * the oldest command awaiting its answer (sent, or queued while the client connects) has waited
 * `stuckMs`, every command awaiting one fails with "Command timed out", as that option fails it, and
 * a connection that was up is replaced: a socket cut off by a partition is otherwise kept, and after
 * the heal TCP's retransmission back-off delays it by as long again as the partition lasted (15-50 s
 * after a 30 s one); a new connection answers as soon as the path is back. A command waits at most
 * `stuckMs` + CHECK_EVERY_MS after it became the oldest. Returns a function that stops the watch.
 */
export function watchStuckConnection(client: RedisClient, stuckMs: number, onReplaced: () => void): () => void {
  let oldest: unknown;
  let since = 0;
  const timer = setInterval(() => {
    const front = oldestAwaiting(client);
    const now = performance.now();
    if (front === undefined || front !== oldest) {
      oldest = front;
      since = now;
      return;
    }
    if (now - since < stuckMs) return;
    oldest = undefined;
    const connected = client.status === 'ready';
    failAwaitingCommands(client);
    if (!connected) return;
    // disconnect(true): ioredis closes the socket and connects anew, resubscribing a subscriber.
    client.disconnect(true);
    onReplaced();
  }, CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** @internal The oldest command of `client` awaiting an answer: sent on the socket, else left by a closed connection, else queued while it connects. */
export function oldestAwaiting(client: RedisClient): unknown {
  const queues = client as ClientQueues;
  return (
    asQueue(queues.commandQueue)?.peekFront() ??
    asQueue(queues.prevCommandQueue)?.peekFront() ??
    asQueue(queues.offlineQueue)?.peekFront()
  );
}

/** @internal Fails every command of `client` that awaits an answer. Those queued stay queued: ioredis sends them once connected, as after its own timeout. */
export function failAwaitingCommands(client: RedisClient): void {
  const queues = client as ClientQueues;
  for (const queue of [queues.commandQueue, queues.prevCommandQueue, queues.offlineQueue]) {
    for (const entry of asQueue(queue)?.toArray() ?? []) (entry as QueuedCommand).command?.reject?.(timedOut());
  }
}

function timedOut(): Error {
  return new Error('Command timed out');
}

function asQueue(value: unknown): CommandQueue | undefined {
  const queue = value as Partial<CommandQueue> | null | undefined;
  return typeof queue?.peekFront === 'function' && typeof queue.toArray === 'function'
    ? (queue as CommandQueue)
    : undefined;
}
