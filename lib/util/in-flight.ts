/**
 * @internal Promises in flight (store commands, acquisitions), counted so that closing can wait for
 * them to settle. A count, not a set of them: an add, a delete and a closure per command cost more
 * than the rest of the bookkeeping on the acquire/release path.
 */
export class InFlight {
  private count = 0;
  private drained: (() => void) | undefined;
  private readonly settle = () => {
    if (--this.count === 0) this.drained?.();
  };

  track<T>(promise: Promise<T>): Promise<T> {
    this.count++;
    promise.then(this.settle, this.settle);
    return promise;
  }

  /** Resolves once nothing is in flight (at once when nothing is); never rejects. */
  settled(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const before = this.drained;
      this.drained = () => {
        this.drained = undefined;
        before?.();
        resolve();
      };
    });
  }
}
