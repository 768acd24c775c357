import { Logger, type ArgumentsHost } from '@nestjs/common';
import {
  LockBackendError,
  LockLostError,
  LockShuttingDownError,
  LockTimeoutError,
  StaleFenceError,
} from '../../errors.js';
import { loadOptional } from '../../util/load-optional.js';
import { Messages } from '../lock-messages.js';
import type { HandlerKind } from '../nest-metadata.js';
import {
  isMappedLockError,
  LockGraphQLError,
  lockErrorPayload,
  type LockErrorPayload,
  type MappedLockError,
} from './lock-context-errors.js';
import {
  LockBusyException,
  LockLostException,
  LockShuttingDownException,
  LockStoreUnavailableException,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from './lock-http-exceptions.js';
import { StaleFenceException } from './stale-fence-exception.js';

type ExceptionClass = new (error: object) => Error;
/** Nest's own last-resort filter of a context: `BaseRpcExceptionFilter`, `BaseWsExceptionFilter`. */
interface BaseFilter {
  catch(exception: unknown, host: ArgumentsHost): unknown;
}

/** What the optional Nest package of a context gives: its exception class and its base filter. */
interface ContextPackage {
  readonly exception: ExceptionClass;
  readonly baseFilter: BaseFilter;
}

/** `RpcException` and `WsException` (with their base filters), from the optional packages an app with such handlers has installed; loaded once. */
const loaded: Partial<Record<'rpc' | 'ws', ContextPackage>> = {};
const sources = {
  rpc: {
    package: '@nestjs/microservices',
    exception: 'RpcException',
    baseFilter: 'BaseRpcExceptionFilter',
    needs: 'A @Locked() microservice handler',
  },
  ws: {
    package: '@nestjs/websockets',
    exception: 'WsException',
    baseFilter: 'BaseWsExceptionFilter',
    needs: 'A @Locked() WebSocket handler',
  },
} as const;

const logger = new Logger('DistributedLock');

/**
 * What a client of a `kind` handler gets for `error`: a lock error becomes the context's exception
 * (see docs/errors.md); anything else is returned as it is. A promise only the first time an
 * `RpcException` or `WsException` is needed (its package is loaded then).
 *
 * - HTTP: `LockBusyException` (409, `Retry-After` when this instance can tell), `LockStoreUnavailableException`
 *   (503), `StaleFenceException` (409), `LockLostException` (409, `LOCK_LOST`), `LockShuttingDownException` (503, `LOCK_SHUTTING_DOWN`).
 * - Microservices and WebSocket gateways: an `RpcException` / `WsException` whose error is the
 *   {@link LockErrorPayload}; GraphQL: a {@link LockGraphQLError} with those `extensions`.
 */
export function answerLockError(error: unknown, kind: HandlerKind): unknown {
  if (!isMappedLockError(error)) return error;
  if (error instanceof LockLostError) logger.warn(Messages.lostAnswered(error.message));
  if (kind === 'http') return httpException(error);
  if (kind === 'graphql') return new LockGraphQLError(lockErrorPayload(error), { cause: error });
  const build = (context: ContextPackage) => withCause(new context.exception({ ...lockErrorPayload(error) }), error);
  const context = loaded[kind];
  return context ? build(context) : load(kind).then(build);
}

/** The HTTP exception of a lock error. */
function httpException(error: MappedLockError): Error {
  if (error instanceof LockTimeoutError) return new LockBusyException(error, retryAfterSeconds(error));
  if (error instanceof LockShuttingDownError) return new LockShuttingDownException(error);
  if (error instanceof LockBackendError)
    return new LockStoreUnavailableException(error, UNAVAILABLE_RETRY_AFTER_SECONDS);
  if (error instanceof StaleFenceError) return new StaleFenceException(error);
  return new LockLostException(error);
}

/**
 * `Retry-After` of a busy lock: `error.likelyFreeInMs` (this instance's estimate of when the key
 * frees) in whole seconds, rounded up, at least 1; undefined (no header) when there is no estimate.
 * Not the holder's lease, which renewals keep full for as long as it works.
 */
function retryAfterSeconds(error: LockTimeoutError): number | undefined {
  if (error.likelyFreeInMs === undefined || !Number.isFinite(error.likelyFreeInMs)) return undefined;
  return Math.max(1, Math.ceil(error.likelyFreeInMs / 1000));
}

/** Loads the exception class of `kind` ahead of need (a failure is the answer's, not this call's). */
export function preloadContextException(kind: HandlerKind): Promise<void> {
  return kind === 'rpc' || kind === 'ws' ? load(kind).then(() => undefined) : Promise.resolve();
}

/** Nest's base filter of `kind` once its package is loaded (see `preloadContextException`). */
export function baseFilterOf(kind: HandlerKind): BaseFilter | undefined {
  return kind === 'rpc' || kind === 'ws' ? loaded[kind]?.baseFilter : undefined;
}

async function load(kind: 'rpc' | 'ws'): Promise<ContextPackage> {
  const source = sources[kind];
  const module = await loadOptional<Record<string, new () => unknown>>(source.package, source.needs);
  return (loaded[kind] ??= {
    exception: module[source.exception] as unknown as ExceptionClass,
    baseFilter: new module[source.baseFilter]() as BaseFilter,
  });
}

function withCause(exception: Error, cause: Error): Error {
  Object.defineProperty(exception, 'cause', { value: cause, configurable: true, writable: true });
  return exception;
}

export type { LockErrorPayload };
