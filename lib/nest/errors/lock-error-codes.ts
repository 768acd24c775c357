/** The stable codes lock errors carry outside HTTP (microservices, WebSocket, GraphQL), and in the HTTP bodies that have one. */
export const LockErrorCode = {
  /** The lock stayed busy for `waitMs` (HTTP: 409). */
  busy: 'LOCK_BUSY',
  /** The lock store could not be reached (HTTP: 503). */
  unavailable: 'LOCK_STORE_UNAVAILABLE',
  /** A fenced write was refused: a newer holder has written since (HTTP: 409). */
  staleFence: 'LOCK_STALE_FENCE',
  /** The request's lock was lost and the work it guarded was refused (HTTP: 409). */
  lost: 'LOCK_LOST',
  /** This instance is shutting down and takes no new lock; another can (HTTP: 503). */
  shuttingDown: 'LOCK_SHUTTING_DOWN',
} as const;

export type LockErrorCode = (typeof LockErrorCode)[keyof typeof LockErrorCode];
