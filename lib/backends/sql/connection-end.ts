import { withinMs } from '../../util/time-limit.js';

/** How long connections get at close to finish what they are doing before they are broken. */
const END_GRACE_MS = 1_000;

/**
 * Waits for `end` (a pool's or a connection's), at most {@link END_GRACE_MS}; then calls
 * `breakConnections` and waits as long again. A pool's end waits for every busy connection to come
 * back, and a goodbye waits for the server: with the database cut off by a partition, a connection
 * whose query never gets an answer would keep its socket, and with it the process, alive until TCP
 * gives up. Broken, its query fails and the end completes.
 */
export async function endOrBreak(end: Promise<unknown>, breakConnections: () => void): Promise<void> {
  const ended = end.then(
    () => undefined,
    () => undefined,
  );
  if (await settledWithin(ended, END_GRACE_MS)) return;
  try {
    breakConnections();
  } catch {
    // a driver whose internals differ: only the wait is bounded
  }
  await settledWithin(ended, END_GRACE_MS);
}

/** Whether `promise` settles within `ms`; the wait never keeps the process alive. */
function settledWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return withinMs(promise, ms, { keepAlive: false }).then(
    () => true,
    () => false,
  );
}
