import { ConflictException, HttpStatus } from '@nestjs/common';
import type { StaleFenceError } from '../../errors.js';
import type { LockAnswerHeaders } from './lock-http-exceptions.js';

/**
 * 409 Conflict: a fenced write was refused because a newer holder of the lock has written since
 * (`StaleFenceError` from `SqlFenceGuard` or `RedisFenceGuard`). The body names the `resource`, the
 * write's `fence` and the `highest` the resource has accepted; the `StaleFenceError` is its `cause`.
 * Thrown for HTTP calls by the lock error answers; a user's `@Catch(StaleFenceException)` filter can shape the answer.
 */
export class StaleFenceException extends ConflictException {
  /** The resource whose write was refused. */
  readonly resource: string;
  /** The fence the refused write carried. */
  readonly fence: number;
  /** The highest fence the resource has accepted. */
  readonly highest: number;
  /** Nothing to set: a retry can come at once. */
  readonly headers: LockAnswerHeaders = {};

  constructor(error: StaleFenceError) {
    const { resource, fence, highest } = error;
    super(
      { statusCode: HttpStatus.CONFLICT, error: 'Conflict', message: error.message, resource, fence, highest },
      { cause: error },
    );
    this.name = 'StaleFenceException';
    this.resource = resource;
    this.fence = fence;
    this.highest = highest;
  }
}
