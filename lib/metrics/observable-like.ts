/** The part of an RxJS Observable the adapters use (`LockService.events`, `LockEngine.events`). */
export interface LockEventSource<T> {
  /** Calls `observer` with every value until unsubscribed. */
  subscribe(observer: (value: T) => void): { unsubscribe(): void };
}

/** Stops an adapter: no more metrics or spans from the events it was given. */
export interface MetricsSubscription {
  /** Stops the adapter. */
  unsubscribe(): void;
}
