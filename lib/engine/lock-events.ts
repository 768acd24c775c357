import type { LockMode } from './lock-mode.js';

interface EventBase {
  /** The key as the caller gave it, without the prefix. */
  readonly key: string;
  readonly backend: string;
}

/** Everything the engine reports, for logs and metrics. Subscribe through `LockService.events`. */
export type LockEvent =
  | (EventBase & { readonly type: 'acquired'; readonly fence: number | undefined; readonly mode: LockMode; readonly waitedMs: number })
  | (EventBase & { readonly type: 'released'; readonly fence: number | undefined; readonly heldMs: number })
  | (EventBase & { readonly type: 'extended'; readonly fence: number | undefined; readonly expiresAt: number })
  | (EventBase & { readonly type: 'extend-failed'; readonly fence: number | undefined; readonly error: Error })
  | (EventBase & { readonly type: 'lost'; readonly fence: number | undefined; readonly heldMs: number; readonly error: Error })
  | (EventBase & { readonly type: 'timeout'; readonly waitedMs: number });

export type LockEventType = LockEvent['type'];
