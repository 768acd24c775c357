import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { RequestParts } from './key-template.js';

/**
 * What Nest passes in the hidden parameter that `@Locked()` adds to a method: how the method was
 * called. On an HTTP route, `args` are `[request, response, next]`; in other contexts (rpc, ws,
 * graphql) they are the handler's native arguments. The `@Locked()` wrapper removes it before the
 * method runs.
 */
export class LockedCall {
  constructor(
    readonly args: readonly unknown[],
    readonly http: boolean,
  ) {}

  get request(): RequestParts {
    return this.args[0] as RequestParts;
  }

  get response(): unknown {
    return this.args[1];
  }

  /** A decorator applied after `@Locked()` that logs its arguments as JSON does not serialise the request. */
  toJSON(): string {
    return '[LockedCall]';
  }
}

/** Compared by identity to find the hidden parameter among a method's parameter decorators. */
export function lockedCallFactory(_data: unknown, context: ExecutionContext): LockedCall {
  return new LockedCall(context.getArgs(), context.getType() === 'http');
}

/** The hidden parameter decorator; applied by `@Locked()` only. */
export const LockedCallParam = createParamDecorator(lockedCallFactory);
