/** First poll delay after a busy attempt, in ms. */
const FIRST_DELAY_MS = 4;
/** Longest poll delay, in ms (the engine also bounds every wait by the holder's remaining lease). */
const MAX_DELAY_MS = 200;
/** Longest poll delay of the waiter next in line (MySQL): it alone may take the key once free, so nobody else will. */
export const NEXT_IN_LINE_POLL_MS = 20;

/**
 * Jittered exponential backoff for polling a busy lock: starts at a few ms and doubles up to
 * MAX_DELAY_MS; each delay is drawn from its upper half so waiters spread out.
 */
export class Backoff {
  private attempt = 0;

  next(): number {
    const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** this.attempt);
    if (ceiling < MAX_DELAY_MS) this.attempt++;
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}
