import { isReachable, type RedlockMaster } from './redlock-masters.js';
import { redisAddress } from '../driver-address.js';

/**
 * @internal What one master said to one command within the round's per-node timeout.
 * - `answer`: it ran the command and replied.
 * - `failed` / `timeout`: no usable reply; the command may still have run (or may run later).
 * - `skipped`: the connection was down, so nothing was sent.
 */
export type NodeReply<T> =
  | { readonly kind: 'answer'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'skipped' };

/** @internal Whether the command may have changed the master's data. */
export function mayHaveRun(reply: { readonly kind: string }): boolean {
  return reply.kind !== 'skipped';
}

/**
 * @internal Runs `command` on `master`, giving up on it after `timeoutMs`. Never rejects.
 *
 * When the timer fires, the verdict waits for the next check phase of the event loop: if the
 * loop itself was blocked (a long synchronous task in the app), replies that arrived meanwhile
 * are read first, instead of every master reading as dead at once.
 */
export function callNode<T>(
  master: RedlockMaster,
  command: (master: RedlockMaster) => Promise<T>,
  timeoutMs: number,
): Promise<NodeReply<T>> {
  if (!isReachable(master)) return Promise.resolve({ kind: 'skipped' });
  return new Promise((resolve) => {
    let done = false;
    const settle = (reply: NodeReply<T>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(reply);
    };
    const timer = setTimeout(() => setImmediate(() => settle({ kind: 'timeout' })), timeoutMs);
    Promise.resolve()
      .then(() => command(master))
      .then(
        (value) => settle({ kind: 'answer', value }),
        (error: unknown) => settle(wasNotSent(error) ? { kind: 'skipped' } : { kind: 'failed', error }),
      );
  });
}

/** ioredis refuses a command on a connection that is not ready when it has no offline queue (our own clients). */
function wasNotSent(error: unknown): boolean {
  return error instanceof Error && error.message.includes('enableOfflineQueue');
}

/** @internal Why masters did not answer, for error messages: `#index: reason`, by the masters' order in the options. */
export function describeFailures(
  replies: readonly { readonly kind: string; readonly error?: unknown }[],
  masters: readonly RedlockMaster[],
): string {
  const reasons = replies.flatMap((reply, i) => {
    const address = redisAddress(masters[i].client);
    const name = `#${masters[i].index}${address === undefined ? '' : ` ${address}`}`;
    if (reply.kind === 'answer') return [];
    if (reply.kind === 'failed')
      return [`${name}: ${reply.error instanceof Error ? reply.error.message : String(reply.error)}`];
    if (reply.kind === 'timeout') return [`${name}: no reply in time`];
    if (reply.kind === 'skipped') return [`${name}: disconnected`];
    return [];
  });
  return reasons.join('; ');
}
